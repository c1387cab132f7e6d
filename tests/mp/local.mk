# tests/mp: targets of this folder (see tests/local.mk)
