# runtime/api: targets of this folder (see the top-level Makefile.am)
