#pragma once
// One background job at a time, newest wins: the GUI thread submits work (a simulation, the
// planner) and polls for its result each frame without blocking. A submission while one runs is
// queued, replacing any queued one, so dragging a slider never piles up simulations.

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

namespace trainsim::ui {

template <class T>
class Worker {
 public:
  struct Result {
    uint64_t id = 0;  // submit()'s return value
    std::optional<T> value;
    std::exception_ptr error;  // set when the work threw
  };

  Worker() : thread_([this] { loop(); }) {}
  ~Worker() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  uint64_t submit(std::function<T()> work) {
    std::lock_guard<std::mutex> lock(mu_);
    queued_ = std::move(work);
    cv_.notify_all();
    return queued_id_ = ++next_id_;
  }
  // A finished result not yet taken.
  std::optional<Result> poll() {
    std::lock_guard<std::mutex> lock(mu_);
    std::optional<Result> r = std::move(done_);
    done_.reset();
    return r;
  }
  bool busy() const {
    std::lock_guard<std::mutex> lock(mu_);
    return running_ || static_cast<bool>(queued_);
  }

 private:
  void loop() {
    while (true) {
      std::function<T()> work;
      uint64_t id = 0;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || static_cast<bool>(queued_); });
        if (stop_) return;
        work = std::move(queued_);
        queued_ = nullptr;
        id = queued_id_;
        running_ = true;
      }
      Result r;
      r.id = id;
      try {
        r.value = work();
      } catch (...) {
        r.error = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mu_);
      done_ = std::move(r);
      running_ = false;
    }
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::function<T()> queued_;
  uint64_t queued_id_ = 0, next_id_ = 0;
  std::optional<Result> done_;
  bool running_ = false, stop_ = false;
  std::thread thread_;
};

}  // namespace trainsim::ui
