// A build without MPI: this process alone (see run/world/world.h).
#include "run/world/world.h"

#include <cstdlib>

namespace tn {

namespace {
const World kAlone;
}

World join_world(int*, char***) { return kAlone; }
void leave_world() {}
const World& world() { return kAlone; }
std::string world_library() { return ""; }
std::vector<std::pair<int, std::string>> gather_status(int code, const std::string& message) { return {{code, message}}; }
int broadcast_code(int code) { return code; }
int worst_code(int code) { return code; }
double max_over_ranks(double v) { return v; }
double sum_over_ranks(double v) { return v; }
void barrier() {}
void abort_world(int code) { std::exit(code); }

}  // namespace tn
