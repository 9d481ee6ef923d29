// exit_gate.h: exit() waits for the GEMMs on the GPU (exit_gate.c).
#ifndef FG_EXIT_GATE_H
#define FG_EXIT_GATE_H

#include "common/fg.h"

#ifdef __cplusplus
extern "C" {
#endif

// A section of work on the GPU begins: 1, or 0 once the process is exiting (the section must
// not start: the caller answers without CUDA). Nested sections of one thread count once.
FG_HIDDEN int fg_exit_gate_enter(void);
// The section that fg_exit_gate_enter let in ends.
FG_HIDDEN void fg_exit_gate_leave(void);
// Registers the exit handler that waits for the sections in progress. Called after the CUDA
// runtime has set itself up, and again after the first GEMM on the GPU: exit handlers run in
// the reverse order of their registration, so this one then runs before the runtime's own.
FG_HIDDEN void fg_exit_gate_arm(void);

#ifdef __cplusplus
}

// The section as a scope: open() tells whether it may run.
class ExitGate {
  public:
    ExitGate() : open_(fg_exit_gate_enter() != 0) {}
    ~ExitGate()
    {
        if (open_) fg_exit_gate_leave();
    }
    ExitGate(const ExitGate &) = delete;
    ExitGate &operator=(const ExitGate &) = delete;
    bool open() const { return open_; }

  private:
    bool open_;
};
#endif

#endif
