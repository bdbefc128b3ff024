#include "validator/gpu/world.hpp"

#include <unistd.h>

#include <array>

#include "sim/launcher.hpp"

#ifdef TRAINSIM_HAVE_MPI
// The C API only: the deprecated C++ bindings do not build cleanly with -Wextra.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace trainsim::validator::gpu {

World::World() {
#ifdef TRAINSIM_HAVE_MPI
  int initialized = 0;
  MPI_Initialized(&initialized);
  // Without a launcher the world is this process alone and MPI stays uninitialised (a machine
  // with libmpi but no OpenMPI runtime still runs one-GPU validations).
  if (!initialized && !sim::launched_by_mpi()) return;
  if (!initialized) {
    MPI_Init(nullptr, nullptr);
    owns_mpi_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &local_rank_);
  MPI_Comm_size(local, &local_size_);
  MPI_Comm_free(&local);
#endif
}

World::~World() {
#ifdef TRAINSIM_HAVE_MPI
  if (owns_mpi_) MPI_Finalize();
#endif
}

void World::broadcast([[maybe_unused]] void* data, [[maybe_unused]] int bytes) const {
#ifdef TRAINSIM_HAVE_MPI
  if (size_ > 1) MPI_Bcast(data, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
#endif
}

double World::max(double v) const {
#ifdef TRAINSIM_HAVE_MPI
  if (size_ > 1) {
    double out = v;
    MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return out;
  }
#endif
  return v;
}

void World::barrier() const {
#ifdef TRAINSIM_HAVE_MPI
  if (size_ > 1) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

std::string World::host() const {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "unknown";
  return name.data();
}

}  // namespace trainsim::validator::gpu
