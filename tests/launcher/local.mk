# tests/launcher: targets of this folder (see tests/local.mk)
