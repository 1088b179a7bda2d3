// MuJoCo's side of tools/checks/cpu_vs_mujoco.py: NWORLD independent mjData of one model stepped
// in lock-step with mj_step, one thread, the loop in C (no Python in the timed region), the
// same protocol as sap_bench's timed pass: reset (qpos0 at rest, or a keyframe), WARMUP untimed
// steps, then NSTEP timed steps of every world, zero controls. Prints one JSON line.
//   mujoco_step_loop MODEL.xml NWORLD NSTEP WARMUP [KEYFRAME]
// Built by cpu_vs_mujoco.py against the headers and libmujoco of the `mujoco` Python wheel.
#include <mujoco/mujoco.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static mjtNum now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e6 * (mjtNum)t.tv_sec + 1e-3 * (mjtNum)t.tv_nsec;
}

static double seconds(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// FNV-1a 64 over bytes: a digest of the final state (checks that runs are the same physics).
static uint64_t fnv1a(uint64_t h, const void* data, size_t n) {
  const unsigned char* p = (const unsigned char*)data;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s MODEL.xml NWORLD NSTEP WARMUP [KEYFRAME] [--timers]\n", argv[0]);
    return 2;
  }
  const char* path = argv[1];
  const int nworld = atoi(argv[2]), nstep = atoi(argv[3]), warmup = atoi(argv[4]);
  const char* key = NULL;
  int timers = 0;
  for (int i = 5; i < argc; ++i) {
    if (strcmp(argv[i], "--timers") == 0) timers = 1;
    else key = argv[i];
  }
  if (timers) mjcb_time = now_us;
  char err[1000] = "";
  mjModel* m = mj_loadXML(path, NULL, err, sizeof(err));
  if (!m) {
    fprintf(stderr, "mujoco_step_loop: %s: %s\n", path, err);
    return 1;
  }
  int keyid = -1;
  if (key) {
    keyid = mj_name2id(m, mjOBJ_KEY, key);
    if (keyid < 0) {
      fprintf(stderr, "mujoco_step_loop: %s: no keyframe '%s'\n", path, key);
      return 1;
    }
  }
  mjData** d = (mjData**)malloc(sizeof(mjData*) * (size_t)nworld);
  for (int w = 0; w < nworld; ++w) {
    d[w] = mj_makeData(m);
    if (keyid >= 0) {
      mj_resetDataKeyframe(m, d[w], keyid);  // qpos, qvel, ctrl of the keyframe (sap_bench holds its ctrl)
    } else {
      mj_resetData(m, d[w]);
    }
  }
  for (int s = 0; s < warmup; ++s)
    for (int w = 0; w < nworld; ++w) mj_step(m, d[w]);
  long long ncon = 0, niter = 0, nefc = 0;
  for (int w = 0; w < nworld; ++w) memset(d[w]->timer, 0, sizeof(d[w]->timer));  // the timed steps only
  const double wall0 = seconds(CLOCK_MONOTONIC), cpu0 = seconds(CLOCK_THREAD_CPUTIME_ID);
  for (int s = 0; s < nstep; ++s)
    for (int w = 0; w < nworld; ++w) mj_step(m, d[w]);
  const double wall = seconds(CLOCK_MONOTONIC) - wall0, cpu = seconds(CLOCK_THREAD_CPUTIME_ID) - cpu0;
  // Work figures from one more (untimed) step of every world.
  for (int w = 0; w < nworld; ++w) {
    mj_step(m, d[w]);
    ncon += d[w]->ncon;
    nefc += d[w]->nefc;
    niter += d[w]->solver_niter[0];
  }
  uint64_t h = 1469598103934665603ULL;
  for (int w = 0; w < nworld; ++w) {
    h = fnv1a(h, d[w]->qpos, sizeof(mjtNum) * (size_t)m->nq);
    h = fnv1a(h, d[w]->qvel, sizeof(mjtNum) * (size_t)m->nv);
  }
  const double ws = (double)nworld * nstep;
  printf("{\"tool\": \"mujoco_step_loop\", \"mujoco_version\": \"%s\", \"model\": \"%s\", \"nq\": %d, \"nv\": %d, "
         "\"ngeom\": %d, \"ntendon\": %d, \"dt\": %.17g, \"nworld\": %d, \"steps\": %d, \"warmup\": %d, "
         "\"wall_s\": %.9g, \"thread_cpu_s\": %.9g, \"world_steps_per_s\": %.9g, \"us_per_world_step\": %.9g, "
         "\"contacts_per_world\": %.6g, \"efc_rows_per_world\": %.6g, \"solver_iterations_per_world\": %.6g, "
         "\"solver\": %d, \"iterations\": %d, \"ls_iterations\": %d, \"cone\": %d, \"integrator\": %d, "
         "\"digest\": \"%016llx\"",
         mj_versionString(), path, (int)m->nq, (int)m->nv, (int)m->ngeom, (int)m->ntendon, m->opt.timestep, nworld, nstep, warmup, wall,
         cpu, ws / wall, 1e6 * wall / ws, (double)ncon / nworld, (double)nefc / nworld, (double)niter / nworld,
         m->opt.solver, m->opt.iterations, m->opt.ls_iterations, m->opt.cone, m->opt.integrator,
         (unsigned long long)h);
  if (timers) {
    printf(", \"timers_us_per_world_step\": {");
    for (int i = 0; i < mjNTIMER; ++i) {  // named by mjTIMERSTRING (step, forward, ..., position's parts)
      double t = 0;
      for (int w = 0; w < nworld; ++w) t += d[w]->timer[i].duration;
      printf("%s\"%s\": %.6g", i ? ", " : "", mjTIMERSTRING[i], t / ws);
    }
    printf("}");
  }
  printf("}\n");
  for (int w = 0; w < nworld; ++w) mj_deleteData(d[w]);
  free(d);
  mj_deleteModel(m);
  return 0;
}
