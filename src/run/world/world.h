// The processes of one training job: MPI ranks when launched by mpirun or srun in a build
// with MPI (TURBANET_MPI), else this process alone. Only what the sharded training needs:
// who we are, and every rank's outcome gathered on rank 0 (run/train_ranks.cpp), and the
// reductions that `sweep` times a job with (run/sweep_run.cpp). MPI
// carries no tensors: members are independent, so ranks train shards (run/shard.h) and rank 0
// merges their run files (run/merge_runs.h).
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace tn {

struct World {
  int rank = 0, size = 1;
  int local_rank = 0;  // among the ranks on this machine (MPI_COMM_TYPE_SHARED): picks its GPU
};

// Joins the MPI job when the launcher says there is one (OMPI_COMM_WORLD_SIZE, PMI_SIZE or
// PMIX_RANK in the environment) and the build has MPI; else this process alone. Call once,
// before anything else; leave_world() at exit.
World join_world(int* argc, char*** argv);
void leave_world();
// The world joined (rank 0 of 1 before join_world).
const World& world();
// "Open MPI 4.1.4" or the like, or "" in a build without MPI.
std::string world_library();

// Every rank's (exit code, message), in rank order on rank 0 (empty elsewhere). Collective:
// every rank must call it.
std::vector<std::pair<int, std::string>> gather_status(int code, const std::string& message);
// Rank 0's `code` on every rank. Collective.
int broadcast_code(int code);
// The largest `code` of any rank, on every rank: how ranks agree to go on (0) or stop together
// before a collective one of them would not reach. Collective.
int worst_code(int code);
// The largest and the sum of every rank's `v`, on every rank. Collective.
double max_over_ranks(double v);
double sum_over_ranks(double v);
// Returns once every rank has called it (ranks start a timed phase together). Collective.
void barrier();
// Ends every rank of the job with `code` (MPI_Abort): for a rank that failed where the others
// may wait for it in a collective. This process alone: exits with `code`.
[[noreturn]] void abort_world(int code);

}  // namespace tn
