/* Environment, errors and Info: init state, versions, clocks, error classes and strings,
 * MPI_ERRORS_RETURN and user error handlers, MPI_Info calls, MPI_Alloc_mem. */
#include "mtest.h"

static int handler_calls = 0, handler_class = -1;
static void my_handler(MPI_Comm *comm, int *code, ...) {
  (void)comm;
  handler_calls++;
  MPI_Error_class(*code, &handler_class);
}

int main(int argc, char **argv) {
  int flag = 1;
  MPI_Initialized(&flag);
  CHECK(flag == 0);
  int provided = -1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank_);
  CHECK(provided == MPI_THREAD_FUNNELED);
  MPI_Query_thread(&provided);
  CHECK(provided == MPI_THREAD_FUNNELED);
  MPI_Is_thread_main(&flag);
  CHECK(flag);
  MPI_Initialized(&flag);
  CHECK(flag == 1);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  int ver, sub;
  MPI_Get_version(&ver, &sub);
  CHECK(ver == MPI_VERSION && sub == MPI_SUBVERSION && ver >= 3);
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int len;
  MPI_Get_library_version(lib, &len);
  CHECK(len > 0);
  char host[MPI_MAX_PROCESSOR_NAME];
  MPI_Get_processor_name(host, &len);
  CHECK(len > 0 && (int)strlen(host) == len);
  double t0 = MPI_Wtime(), tick = MPI_Wtick();
  CHECK(tick > 0 && tick < 0.01 && MPI_Wtime() >= t0);

  /* errors: the default handler is fatal; with MPI_ERRORS_RETURN codes come back */
  MPI_Errhandler eh;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
  CHECK(eh == MPI_ERRORS_ARE_FATAL);
  MPI_Errhandler_free(&eh);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int cls, x = 0;
  int rc = MPI_Send(&x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_RANK);
  rc = MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_COUNT);
  rc = MPI_Send(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_TAG);
  rc = MPI_Bcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_ROOT);
  rc = MPI_Allreduce(&x, &cls, 1, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD);
  CHECK(rc != MPI_SUCCESS);
  rc = MPI_Barrier(MPI_COMM_NULL);
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_COMM);
  MPI_Datatype dt = MPI_INT;
  rc = MPI_Type_free(&dt);
  CHECK(rc != MPI_SUCCESS);
  char msg[MPI_MAX_ERROR_STRING];
  MPI_Error_string(MPI_ERR_TRUNCATE, msg, &len);
  CHECK(len > 0 && (int)strlen(msg) == len);
  MPI_Error_string(MPI_SUCCESS, msg, &len);
  CHECK(len > 0);
  MPI_Error_class(MPI_ERR_OTHER, &cls);
  CHECK(cls == MPI_ERR_OTHER);
  say("error classes: ok");

  /* a user handler on a dup */
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Errhandler mine;
  MPI_Comm_create_errhandler(my_handler, &mine);
  MPI_Comm_set_errhandler(dup, mine);
  MPI_Errhandler_free(&mine);
  rc = MPI_Send(&x, 1, MPI_INT, -7, 0, dup);
  CHECK(handler_calls == 1 && handler_class == MPI_ERR_RANK && rc != MPI_SUCCESS);
  MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER);
  CHECK(handler_calls == 2 && handler_class == MPI_ERR_OTHER);
  MPI_Comm child;
  MPI_Comm_dup(dup, &child); /* inherits the handler */
  MPI_Send(&x, 1, MPI_INT, -7, 0, child);
  CHECK(handler_calls == 3);
  MPI_Comm_free(&child);
  MPI_Comm_free(&dup);
  say("user errhandler: ok");

  /* Info */
  MPI_Info info, info2;
  MPI_Info_create(&info);
  MPI_Info_set(info, "cb_nodes", "4");
  MPI_Info_set(info, "romio_ds_read", "disable");
  MPI_Info_set(info, "cb_nodes", "8");
  int nkeys;
  MPI_Info_get_nkeys(info, &nkeys);
  CHECK(nkeys == 2);
  char val[MPI_MAX_INFO_VAL + 1];
  MPI_Info_get(info, "cb_nodes", MPI_MAX_INFO_VAL, val, &flag);
  CHECK(flag && strcmp(val, "8") == 0);
  MPI_Info_get(info, "nope", MPI_MAX_INFO_VAL, val, &flag);
  CHECK(!flag);
  int vlen;
  MPI_Info_get_valuelen(info, "romio_ds_read", &vlen, &flag);
  CHECK(flag && vlen == 7);
  MPI_Info_get(info, "romio_ds_read", 3, val, &flag);
  CHECK(flag && strcmp(val, "dis") == 0);
  char key[MPI_MAX_INFO_KEY + 1];
  int seen = 0;
  for (int i = 0; i < nkeys; i++) {
    MPI_Info_get_nthkey(info, i, key);
    seen += strcmp(key, "cb_nodes") == 0 || strcmp(key, "romio_ds_read") == 0;
  }
  CHECK(seen == 2);
  MPI_Info_dup(info, &info2);
  MPI_Info_delete(info, "cb_nodes");
  MPI_Info_get_nkeys(info, &nkeys);
  CHECK(nkeys == 1);
  MPI_Info_get_nkeys(info2, &nkeys);
  CHECK(nkeys == 2);
  rc = MPI_Info_delete(info, "cb_nodes");
  MPI_Error_class(rc, &cls);
  CHECK(cls == MPI_ERR_INFO_NOKEY);
  MPI_Info_free(&info);
  MPI_Info_free(&info2);
  CHECK(info == MPI_INFO_NULL);
  say("info: ok");

  void *mem = NULL;
  MPI_Alloc_mem(1 << 20, MPI_INFO_NULL, &mem);
  CHECK(mem != NULL);
  memset(mem, 1, 1 << 20);
  MPI_Free_mem(mem);
  MPI_Aint a1, a2;
  int arr[4];
  MPI_Get_address(&arr[0], &a1);
  MPI_Get_address(&arr[3], &a2);
  CHECK(MPI_Aint_diff(a2, a1) == 3 * sizeof(int));

  int total = 0;
  MPI_Allreduce(&mt_errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  say("errors=%d", total);
  MPI_Finalize();
  MPI_Finalized(&flag);
  CHECK(flag == 1);
  return total != 0 || mt_errors != 0;
}
