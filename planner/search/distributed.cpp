#include "planner/search/distributed.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "sim/launcher.hpp"

#if TRAINSIM_HAVE_MPI
// The C API only: the deprecated C++ bindings do not build cleanly with -Wextra.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace trainsim::planner::search {

Distributed& Distributed::instance() {
  static Distributed d;
  return d;
}

Distributed::Distributed() {
#if TRAINSIM_HAVE_MPI
  if (!sim::launched_by_mpi()) return;
  // The validator's GPU world may have initialised MPI already; then it also finalises it.
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    MPI_Init(nullptr, nullptr);
    initialised_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
#endif
}

Distributed::~Distributed() {
#if TRAINSIM_HAVE_MPI
  if (initialised_) MPI_Finalize();
#endif
}

std::vector<std::string> Distributed::gather(const std::string& mine) const {
  if (size_ == 1) return {mine};
#if TRAINSIM_HAVE_MPI
  const int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<size_t>(size_));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(static_cast<size_t>(size_), 0);
  std::string all;
  if (rank_ == 0) {
    int total = 0;
    for (int r = 0; r < size_; ++r) {
      offsets[static_cast<size_t>(r)] = total;
      total += lens[static_cast<size_t>(r)];
    }
    all.resize(static_cast<size_t>(total));
  }
  MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (rank_ == 0)
    for (int r = 0; r < size_; ++r)
      out.push_back(all.substr(static_cast<size_t>(offsets[static_cast<size_t>(r)]),
                               static_cast<size_t>(lens[static_cast<size_t>(r)])));
  return out;
#else
  return {mine};
#endif
}

std::string Distributed::broadcast(const std::string& from_root) const {
  if (size_ == 1) return from_root;
#if TRAINSIM_HAVE_MPI
  int64_t len = static_cast<int64_t>(from_root.size());
  MPI_Bcast(&len, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  std::string out = rank_ == 0 ? from_root : std::string(static_cast<size_t>(len), '\0');
  MPI_Bcast(out.data(), static_cast<int>(len), MPI_CHAR, 0, MPI_COMM_WORLD);
  return out;
#else
  return from_root;
#endif
}

void Distributed::abort_others(const std::string& what) const {
  if (size_ <= 1) return;
#if TRAINSIM_HAVE_MPI
  std::fprintf(stderr, "internal error (rank %d of %d): %s\n", rank_, size_, what.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
#else
  (void)what;
#endif
}

void Distributed::fail_all(const std::string& line, int code) const {
  if (size_ <= 1) return;
#if TRAINSIM_HAVE_MPI
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
#else
  (void)line;
  (void)code;
#endif
}

void put_string(std::string& out, const std::string& s) {
  put<uint64_t>(out, s.size());
  out += s;
}

std::string take_string(const std::string& in, size_t& pos) {
  const auto n = take<uint64_t>(in, pos);
  std::string s = in.substr(pos, n);
  pos += n;
  return s;
}

}  // namespace trainsim::planner::search
