/* Communicators, groups and attributes: dup/split/create/compare/free, group arithmetic,
 * MPI_TAG_UB and the other predefined attributes, user keyvals with copy/delete callbacks,
 * names. Needs at least 2 ranks. */
#include "mtest.h"

static int deletes = 0;
static int del_fn(MPI_Comm c, int k, void *v, void *x) {
  (void)c, (void)k, (void)x;
  deletes += *(int *)v;
  return MPI_SUCCESS;
}

int main(int argc, char **argv) {
  mt_init(&argc, &argv);
  int rank, size, res;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  int *ub, flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
  CHECK(flag && *ub >= 32767);
  int *wtg;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &wtg, &flag);
  int *host;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &host, &flag);
  say("tag_ub>=32767: %d", *ub >= 32767);

  /* dup: congruent, with its own matching context */
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_compare(MPI_COMM_WORLD, dup, &res);
  CHECK(res == MPI_CONGRUENT);
  MPI_Comm_compare(dup, dup, &res);
  CHECK(res == MPI_IDENT);
  {
    int a = rank, b = -1, c = -1;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Request r[2];
    MPI_Irecv(&b, 1, MPI_INT, left, 0, dup, &r[0]);
    MPI_Irecv(&c, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &r[1]);
    int a2 = a + 100;
    MPI_Send(&a2, 1, MPI_INT, right, 0, MPI_COMM_WORLD);
    MPI_Send(&a, 1, MPI_INT, right, 0, dup);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    CHECK(b == left && c == left + 100);
  }

  /* split: even and odd ranks, reversed by key */
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
  int hrank, hsize;
  MPI_Comm_rank(half, &hrank);
  MPI_Comm_size(half, &hsize);
  CHECK(hsize == (size + 1 - rank % 2) / 2);
  int hsum = 0;
  MPI_Allreduce(&rank, &hsum, 1, MPI_INT, MPI_SUM, half);
  say("split: size0=%d", (size + 1) / 2);
  MPI_Comm_compare(MPI_COMM_WORLD, half, &res);
  CHECK(res == MPI_UNEQUAL);
  MPI_Comm none;
  MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, 0, &none);
  CHECK((rank == 0) == (none == MPI_COMM_NULL));
  if (none != MPI_COMM_NULL) MPI_Comm_free(&none);

  /* groups */
  MPI_Group world, hg, g2, u, in, diff;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Comm_group(half, &hg);
  int gs, gr;
  MPI_Group_size(world, &gs);
  MPI_Group_rank(world, &gr);
  CHECK(gs == size && gr == rank);
  int *r1 = malloc(sizeof(int) * size), *r2 = malloc(sizeof(int) * size);
  for (int i = 0; i < size; i++) r1[i] = i;
  MPI_Group_translate_ranks(world, size, r1, hg, r2);
  for (int i = 0; i < size; i++)
    CHECK((i % 2 == rank % 2) ? r2[i] != MPI_UNDEFINED : r2[i] == MPI_UNDEFINED);
  int ex[1] = {0};
  MPI_Group_excl(world, 1, ex, &g2);
  MPI_Group_size(g2, &gs);
  CHECK(gs == size - 1);
  MPI_Group_union(hg, g2, &u);
  MPI_Group_size(u, &gs);
  int usize = gs;
  MPI_Group_intersection(hg, g2, &in);
  MPI_Group_size(in, &gs);
  int isize = gs;
  MPI_Group_difference(world, g2, &diff);
  MPI_Group_size(diff, &gs);
  CHECK(gs == 1);
  MPI_Group_compare(world, world, &res);
  CHECK(res == MPI_IDENT);
  int rev[64];
  for (int i = 0; i < size; i++) rev[i] = size - 1 - i;
  MPI_Group revg;
  MPI_Group_incl(world, size, rev, &revg);
  MPI_Group_compare(world, revg, &res);
  CHECK(res == (size > 1 ? MPI_SIMILAR : MPI_IDENT));
  int ranges[1][3] = {{0, size - 1, 2}};
  MPI_Group evens;
  MPI_Group_range_incl(world, 1, ranges, &evens);
  MPI_Group_size(evens, &gs);
  CHECK(gs == (size + 1) / 2);
  say("groups: union=%d inter=%d", usize, isize);

  /* MPI_Comm_create from a group (reversed order) */
  MPI_Comm rc;
  MPI_Comm_create(MPI_COMM_WORLD, revg, &rc);
  int rr;
  MPI_Comm_rank(rc, &rr);
  CHECK(rr == size - 1 - rank);
  MPI_Comm ec;
  MPI_Comm_create(MPI_COMM_WORLD, evens, &ec);
  CHECK((rank % 2 == 0) == (ec != MPI_COMM_NULL));
  if (ec != MPI_COMM_NULL) {
    int er;
    MPI_Comm_rank(ec, &er);
    CHECK(er == rank / 2);
    MPI_Comm_free(&ec);
  }
  MPI_Group empty;
  MPI_Group_incl(world, 0, NULL, &empty);
  MPI_Group_size(empty, &gs);
  CHECK(gs == 0);
  MPI_Group_compare(empty, MPI_GROUP_EMPTY, &res);
  CHECK(res == MPI_IDENT);

  /* attributes: copied on dup, deleted on free */
  int key;
  static int one = 1, two = 2;
  MPI_Comm_create_keyval(MPI_COMM_DUP_FN, del_fn, &key, NULL);
  MPI_Comm_set_attr(dup, key, &one);
  MPI_Comm dup2;
  MPI_Comm_dup(dup, &dup2);
  int *v;
  MPI_Comm_get_attr(dup2, key, &v, &flag);
  CHECK(flag && *v == 1);
  MPI_Comm_set_attr(dup2, key, &two); /* deletes the old value (1) first */
  MPI_Comm_delete_attr(dup2, key);    /* 2 */
  MPI_Comm_get_attr(dup2, key, &v, &flag);
  CHECK(!flag);
  MPI_Comm_free(&dup2);
  MPI_Comm_free(&dup); /* 1 */
  CHECK(dup == MPI_COMM_NULL);
  MPI_Comm_free_keyval(&key);
  CHECK(key == MPI_KEYVAL_INVALID);
  say("attr deletes: %d", deletes);

  /* names */
  char name[MPI_MAX_OBJECT_NAME];
  int len;
  MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
  say("world name: %s", name);
  MPI_Comm_set_name(half, "half");
  MPI_Comm_get_name(half, name, &len);
  CHECK(strcmp(name, "half") == 0 && len == 4);

  /* split_type shared: one host here */
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int nsize;
  MPI_Comm_size(node, &nsize);
  CHECK(nsize == size);
  MPI_Comm_free(&node);

  int inter = 1;
  MPI_Comm_test_inter(MPI_COMM_WORLD, &inter);
  CHECK(inter == 0);

  /* intercommunicator: evens and odds, leaders world 0 and 1 */
  if (size > 1) {
    MPI_Comm local, ic, merged, icdup;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - rank % 2, 7, &ic);
    int isinter = 0, lsize, rsize, lrank;
    MPI_Comm_test_inter(ic, &isinter);
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    MPI_Comm_rank(ic, &lrank);
    CHECK(isinter == 1 && lsize == (size + 1 - rank % 2) / 2 && lrank == rank / 2);
    CHECK(rsize == size - lsize);
    /* point-to-point: local rank i of the evens and of the odds talk, ranks are remote ones */
    if (lrank < rsize && lrank < lsize && (rank % 2 == 0 ? lrank < (size / 2) : 1)) {
      int out = rank, in = -1;
      MPI_Status st;
      MPI_Sendrecv(&out, 1, MPI_INT, lrank, 3, &in, 1, MPI_INT, lrank, 3, ic, &st);
      CHECK(in == (rank % 2 == 0 ? rank + 1 : rank - 1) && st.MPI_SOURCE == lrank);
    }
#ifdef RRT_MPI
    { /* rrt has no collectives on intercommunicators: an error, never a silent success */
      int bar = 1;
      MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
      int cerr = MPI_Bcast(&bar, 1, MPI_INT, MPI_PROC_NULL, ic), cls;
      MPI_Error_class(cerr, &cls);
      CHECK(cls == MPI_ERR_COMM);
    }
#endif
    MPI_Comm_dup(ic, &icdup);
    MPI_Comm_compare(ic, icdup, &res);
    CHECK(res == MPI_CONGRUENT);
    MPI_Group rg;
    MPI_Comm_remote_group(icdup, &rg);
    MPI_Group_size(rg, &gs);
    CHECK(gs == rsize);
    MPI_Group_free(&rg);
    /* merge: odds (high) after evens */
    MPI_Intercomm_merge(ic, rank % 2, &merged);
    int mrank, msize;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    CHECK(msize == size && mrank == (rank % 2 ? (size + 1) / 2 + rank / 2 : rank / 2));
    MPI_Comm_free(&merged);
    MPI_Comm_free(&icdup);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
  }

  /* MPI_Comm_create_group: only the members call it */
  {
    MPI_Group wg, top;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int range[1][3] = {{size - 1, 0, -1}}; /* reversed world */
    MPI_Group_range_incl(wg, 1, range, &top);
    if (rank >= size / 2) {
      int keep[1][3] = {{0, size - 1 - size / 2, 1}};
      MPI_Group part;
      MPI_Group_range_incl(top, 1, keep, &part);
      MPI_Comm cg;
      MPI_Comm_create_group(MPI_COMM_WORLD, part, 5, &cg);
      int cr = -1;
      MPI_Comm_rank(cg, &cr);
      CHECK(cr == size - 1 - rank);
      MPI_Comm_free(&cg);
      MPI_Group_free(&part);
    }
    MPI_Group_free(&top);
    MPI_Group_free(&wg);
  }

  /* datatype envelopes */
  {
    MPI_Datatype v, r;
    int ni, na, nd, comb;
    MPI_Type_vector(3, 2, 4, MPI_INT, &v);
    MPI_Type_get_envelope(v, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nd == 1);
    MPI_Type_create_resized(v, 0, 64, &r);
    MPI_Type_get_envelope(r, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_RESIZED && ni == 0 && na == 2 && nd == 1);
    MPI_Type_get_envelope(MPI_DOUBLE, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_NAMED);
    MPI_Type_free(&r);
    MPI_Type_free(&v);
  }

#ifdef RRT_MPI
  /* the most balanced decompositions (MPI 3.1 section 7.5.2; MPICH agrees, Open MPI 4.1 gives
   * 24x14 for 336) */
  {
    int d2[2] = {0, 0}, d4[4] = {0, 0, 0, 0}, d3[3] = {0, 0, 0};
    MPI_Dims_create(336, 2, d2);
    MPI_Dims_create(5616, 4, d4);
    MPI_Dims_create(55440, 3, d3);
    CHECK(d2[0] == 21 && d2[1] == 16);
    CHECK(d4[0] == 13 && d4[1] == 9 && d4[2] == 8 && d4[3] == 6);
    CHECK(d3[0] == 44 && d3[1] == 36 && d3[2] == 35);
  }
#endif

  MPI_Group_free(&world);
  MPI_Group_free(&hg);
  MPI_Group_free(&g2);
  MPI_Group_free(&u);
  MPI_Group_free(&in);
  MPI_Group_free(&diff);
  MPI_Group_free(&revg);
  MPI_Group_free(&evens);
  CHECK(world == MPI_GROUP_NULL);
  MPI_Comm_free(&rc);
  MPI_Comm_free(&half);
  free(r1), free(r2);
  return mt_finish();
}
