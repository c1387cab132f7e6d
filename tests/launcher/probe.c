/* probe: a plain PMIx client for the launcher tests (no librrt).
 *
 * Usage: probe [options] [ignored words, e.g. a unique token for pgrep]
 *   --no-pmix           do not call PMIx at all
 *   --info              print "rank R size S local_size L peers P nodeid N ns NS"
 *   --modex             put a key, fence with data collection, read every peer's key
 *   --print TEXT        print "rank R: TEXT" on stdout
 *   --stderr TEXT       print "rank R: TEXT" on stderr
 *   --partial TEXT      print TEXT on stdout without a newline
 *   --echo-stdin        rank 0 copies stdin to stdout, prefixed "stdin: "
 *   --affinity          print "rank R cpus C1,C2,..."
 *   --env NAME          print "rank R env NAME=VALUE" (or "unset")
 *   --pidfile DIR       write the pid to DIR/rank.R.pid
 *   --shm-leftover      create /dev/shm/rrt-<jobId>-probe<R> (jobId: namespace, sanitized)
 *   --exit R:CODE       rank R exits with CODE (R = -1: every rank)
 *   --signal R:SIG      rank R kills itself with SIG
 *   --segv R            rank R dereferences NULL
 *   --abort R:CODE      rank R calls PMIx_Abort(CODE)
 *   --ignore-term       ignore SIGTERM (tests SIGKILL escalation)
 *   --trap-int          on SIGINT print "rank R got SIGINT" and exit 0
 *   --no-finalize       exit without PMIx_Finalize
 *   --sleep SECONDS     sleep (after the actions above)
 * Exits 0 on success, 10+ on a failed check.
 */
#define _GNU_SOURCE
#include <pmix.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int g_rank = 0;

static void die(int code, const char *what) {
  fprintf(stderr, "probe rank %d: %s\n", g_rank, what);
  fflush(stderr);
  exit(code);
}

static int targetMatches(const char *spec, int *value) {
  int target = 0;
  if (sscanf(spec, "%d:%d", &target, value) != 2) die(10, "bad R:VALUE argument");
  return target == -1 || target == g_rank;
}

static void onInt(int sig) {
  (void)sig;
  char buf[64];
  int n = snprintf(buf, sizeof buf, "rank %d got SIGINT\n", g_rank);
  if (write(1, buf, (size_t)n) < 0) _exit(2);
  _exit(0);
}

static uint32_t getU32(const pmix_proc_t *proc, const char *key) {
  pmix_value_t *val = NULL;
  if (PMIx_Get(proc, key, NULL, 0, &val) != PMIX_SUCCESS || !val) die(11, key);
  uint32_t v = 0;
  if (val->type == PMIX_UINT32) v = val->data.uint32;
  else if (val->type == PMIX_UINT16) v = val->data.uint16;
  else die(12, key);
  PMIX_VALUE_RELEASE(val);
  return v;
}

static char *getString(const pmix_proc_t *proc, const char *key) {
  pmix_value_t *val = NULL;
  if (PMIx_Get(proc, key, NULL, 0, &val) != PMIX_SUCCESS || !val || val->type != PMIX_STRING) {
    die(13, key);
  }
  char *s = strdup(val->data.string);
  PMIX_VALUE_RELEASE(val);
  return s;
}

int main(int argc, char **argv) {
  int usePmix = 1, finalize = 1;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--no-pmix")) usePmix = 0;
    if (!strcmp(argv[i], "--no-finalize")) finalize = 0;
  }
  pmix_proc_t me, wild;
  memset(&me, 0, sizeof me);
  if (usePmix) {
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
      fprintf(stderr, "probe: PMIx_Init failed: %s\n", PMIx_Error_string(rc));
      return 20;
    }
    g_rank = (int)me.rank;
    PMIX_LOAD_PROCID(&wild, me.nspace, PMIX_RANK_WILDCARD);
  }
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : "";
    int value = 0;
    if (!strcmp(a, "--info") && usePmix) {
      uint32_t size = getU32(&wild, PMIX_JOB_SIZE);
      uint32_t lsize = getU32(&wild, PMIX_LOCAL_SIZE);
      char *peers = getString(&wild, PMIX_LOCAL_PEERS);
      uint32_t nodeid = getU32(&me, PMIX_NODEID);
      printf("rank %d size %u local_size %u peers %s nodeid %u ns %s\n", g_rank, size, lsize,
             peers, nodeid, me.nspace);
      free(peers);
    } else if (!strcmp(a, "--modex") && usePmix) {
      uint32_t size = getU32(&wild, PMIX_JOB_SIZE);
      char mine[64];
      snprintf(mine, sizeof mine, "value-of-%d", g_rank);
      pmix_value_t val;
      PMIX_VALUE_LOAD(&val, mine, PMIX_STRING);
      if (PMIx_Put(PMIX_GLOBAL, "probe.key", &val) != PMIX_SUCCESS) die(14, "PMIx_Put");
      PMIX_VALUE_DESTRUCT(&val);
      if (PMIx_Commit() != PMIX_SUCCESS) die(15, "PMIx_Commit");
      pmix_info_t info;
      bool collect = true;
      PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
      if (PMIx_Fence(&wild, 1, &info, 1) != PMIX_SUCCESS) die(16, "PMIx_Fence");
      PMIX_INFO_DESTRUCT(&info);
      for (uint32_t r = 0; r < size; ++r) {
        pmix_proc_t peer;
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        pmix_value_t *got = NULL;
        char want[64];
        snprintf(want, sizeof want, "value-of-%u", r);
        if (PMIx_Get(&peer, "probe.key", NULL, 0, &got) != PMIX_SUCCESS || !got ||
            got->type != PMIX_STRING || strcmp(got->data.string, want) != 0) {
          die(17, "modex value mismatch");
        }
        PMIX_VALUE_RELEASE(got);
      }
      printf("rank %d modex ok with %u ranks\n", g_rank, size);
    } else if (!strcmp(a, "--print")) {
      printf("rank %d: %s\n", g_rank, v);
    } else if (!strcmp(a, "--stderr")) {
      fprintf(stderr, "rank %d: %s\n", g_rank, v);
    } else if (!strcmp(a, "--partial")) {
      printf("%s", v);
    } else if (!strcmp(a, "--echo-stdin") && g_rank == 0) {
      char line[4096];
      while (fgets(line, sizeof line, stdin)) printf("stdin: %s", line);
    } else if (!strcmp(a, "--affinity")) {
      cpu_set_t set;
      CPU_ZERO(&set);
      sched_getaffinity(0, sizeof set, &set);
      printf("rank %d cpus ", g_rank);
      const char *sep = "";
      for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &set)) {
          printf("%s%d", sep, c);
          sep = ",";
        }
      }
      printf("\n");
    } else if (!strcmp(a, "--env")) {
      const char *e = getenv(v);
      printf("rank %d env %s=%s\n", g_rank, v, e ? e : "(unset)");
    } else if (!strcmp(a, "--pidfile")) {
      char path[4096];
      snprintf(path, sizeof path, "%s/rank.%d.pid", v, g_rank);
      FILE *f = fopen(path, "w");
      if (!f) die(18, "pidfile");
      fprintf(f, "%ld\n", (long)getpid());
      fclose(f);
    } else if (!strcmp(a, "--shm-leftover") && usePmix) {
      char id[PMIX_MAX_NSLEN + 1];
      snprintf(id, sizeof id, "%s", me.nspace);
      for (char *c = id; *c; ++c) {
        if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
              *c == '_' || *c == '.' || *c == '-')) {
          *c = '_';
        }
      }
      char path[512];
      snprintf(path, sizeof path, "/dev/shm/rrt-%s-probe%d", id, g_rank);
      FILE *f = fopen(path, "w");
      if (!f) die(19, "shm leftover");
      fclose(f);
      printf("rank %d created %s\n", g_rank, path);
    } else if (!strcmp(a, "--exit") && targetMatches(v, &value)) {
      fflush(stdout);
      if (usePmix && finalize) PMIx_Finalize(NULL, 0);
      exit(value);
    } else if (!strcmp(a, "--signal") && targetMatches(v, &value)) {
      fflush(stdout);
      signal(value, SIG_DFL);
      raise(value);
    } else if (!strcmp(a, "--segv") && atoi(v) == g_rank) {
      fflush(stdout);
      signal(SIGSEGV, SIG_DFL);
      volatile int *p = NULL;
      *p = 1;
    } else if (!strcmp(a, "--abort") && targetMatches(v, &value) && usePmix) {
      fflush(stdout);
      PMIx_Abort(value, "probe asked to abort", NULL, 0);
      exit(value);
    } else if (!strcmp(a, "--ignore-term")) {
      signal(SIGTERM, SIG_IGN);
    } else if (!strcmp(a, "--trap-int")) {
      signal(SIGINT, onInt);
    } else if (!strcmp(a, "--sleep")) {
      fflush(stdout);
      double secs = atof(v);
      struct timespec ts = {(time_t)secs, (long)((secs - (time_t)secs) * 1e9)};
      while (nanosleep(&ts, &ts) != 0) {
      }
    }
  }
  fflush(stdout);
  if (usePmix && finalize) {
    pmix_status_t rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) die(21, "PMIx_Finalize");
  }
  return 0;
}
