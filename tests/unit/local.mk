# tests/unit: targets of this folder (see tests/local.mk)
