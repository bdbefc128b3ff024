#pragma once
// Whether this process was started by an MPI launcher (mpirun / srun with PMIx or PMI): the
// planner's sharding and the validator's worlds initialise MPI only then, so that a plain
// `trainsim` never starts MPI's runtime (a machine may have libmpi but not its launcher).

#include <cstdlib>

namespace trainsim::sim {

inline bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}

}  // namespace trainsim::sim
