// A build with MPI (Open MPI from Debian): the job's ranks (see run/world/world.h).
#include <mpi.h>

#include <cstdlib>

#include "run/world/world.h"

namespace tn {

namespace {

World joined;
bool initialized = false;

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(v)) return true;
  return false;
}

}  // namespace

World join_world(int* argc, char*** argv) {
  if (initialized || !launched_by_mpi()) return joined;
  MPI_Init(argc, argv);
  initialized = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &joined.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &joined.size);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, joined.rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &joined.local_rank);
  MPI_Comm_free(&local);
  return joined;
}

void leave_world() {
  if (initialized) MPI_Finalize();
  initialized = false;
}

const World& world() { return joined; }

std::string world_library() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, static_cast<std::size_t>(len));
  const std::size_t comma = s.find(',');  // "Open MPI v4.1.4, package: ..."
  return comma == std::string::npos ? s : s.substr(0, comma);
}

std::vector<std::pair<int, std::string>> gather_status(int code, const std::string& message) {
  if (!initialized) return {{code, message}};
  const int P = joined.size;
  std::vector<int> codes(joined.rank == 0 ? P : 0), lengths(joined.rank == 0 ? P : 0);
  const int len = static_cast<int>(message.size());
  MPI_Gather(&code, 1, MPI_INT, codes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Gather(&len, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(lengths.size(), 0);
  int total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) offsets[r] = total, total += lengths[r];
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Gatherv(message.data(), len, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::pair<int, std::string>> r;
  for (std::size_t i = 0; i < codes.size(); ++i)
    r.emplace_back(codes[i], all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(lengths[i])));
  return r;
}

int broadcast_code(int code) {
  if (initialized) MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return code;
}

int worst_code(int code) {
  int r = code;
  if (initialized) MPI_Allreduce(&code, &r, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return r;
}

namespace {
double all_reduce(double v, MPI_Op op) {
  double r = v;
  if (initialized) MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, op, MPI_COMM_WORLD);
  return r;
}
}  // namespace

double max_over_ranks(double v) { return all_reduce(v, MPI_MAX); }
double sum_over_ranks(double v) { return all_reduce(v, MPI_SUM); }

void barrier() {
  if (initialized) MPI_Barrier(MPI_COMM_WORLD);
}

void abort_world(int code) {
  if (initialized) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

}  // namespace tn
