# tests/softrdma: targets of this folder (see tests/local.mk)
