# runtime/transport/shm: targets of this folder (see the top-level Makefile.am)
