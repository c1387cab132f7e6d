librrtint_la_SOURCES += runtime/wireup/wireup.h runtime/wireup/pmix_client.cc
