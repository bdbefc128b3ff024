#pragma once
// The planner's processes: one, or the ranks of `mpirun -np K trainsim plan ...` (OpenMPI from
// Debian). MPI is initialised only when the process was started by an MPI launcher (OMPI_* / PMI_*
// in the environment), so a plain `trainsim` never pays for it; without MPI at build time every
// call is the single-process identity. Results travel as bytes; only rank 0 prints.

#include <string>
#include <vector>

namespace trainsim::planner::search {

class Distributed {
 public:
  // Initialises MPI on first use when launched by mpirun; finalises at exit.
  static Distributed& instance();
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool root() const { return rank_ == 0; }
  // Every rank's bytes, in rank order, at rank 0 (other ranks get an empty vector).
  std::vector<std::string> gather(const std::string& mine) const;
  // Rank 0's bytes on every rank.
  std::string broadcast(const std::string& from_root) const;
  // An internal error on this rank while other ranks may wait in a collective: under MPI with
  // several ranks, print it and abort the whole job (MPI_Abort, exit code 1); otherwise return
  // and let the caller throw.
  void abort_others(const std::string& what) const;
  // A failure only this rank may have seen (the validator's replay): under MPI with several ranks,
  // print `line` and end every rank with exit code `code` (MPI_Abort); otherwise return.
  void fail_all(const std::string& line, int code) const;
  ~Distributed();

 private:
  Distributed();
  int rank_ = 0, size_ = 1;
  bool initialised_ = false;  // this object initialised MPI (and finalises it)
};

// Appends / reads trivially copyable values as raw bytes (same binary on every rank).
template <typename T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}
template <typename T>
T take(const std::string& in, size_t& pos) {
  T v;
  std::copy(in.data() + pos, in.data() + pos + sizeof(T), reinterpret_cast<char*>(&v));
  pos += sizeof(T);
  return v;
}
void put_string(std::string& out, const std::string& s);
std::string take_string(const std::string& in, size_t& pos);

}  // namespace trainsim::planner::search
