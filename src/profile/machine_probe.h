// The machine's speed as a trial sees it: a fixed amount of single-thread
// arithmetic timed by the calling thread's CPU clock.
//
// On a shared or virtual machine the same work can cost more CPU time for
// minutes at a time while neighbours on the host take the caches, the memory
// bandwidth or the clock (docs/lab/PROFILING-NOISE.md measured a LeNet step's
// CPU time 1.3-1.5x apart between two profiles two minutes apart, each
// profile's repeats agreeing within a few per cent). A step's CPU clock cannot
// see that; the probe sees the part that slows arithmetic in the core's own
// caches. The profiler records it with each time trial, and `samples compare`
// says when two profiles ran on a machine at different speeds. It is a
// witness, not a correction: how much a workload slows down depends on the
// workload, so step times are never divided by it.
#pragma once

namespace trainplan::profile {

// Seconds of the calling thread's CPU time for the probe's fixed work: the
// median of 5 runs of 160 products of 64x64 single-precision matrices (about
// 2 ms a run on a 2020s server core, about 11 ms in all). Always > 0.
double machine_probe_s();

// Whether two probe readings say the machine ran at different speeds: more
// than 10% apart, where one machine at one speed repeats the probe within a
// few per cent.
bool probes_differ(double a_s, double b_s);

}  // namespace trainplan::profile
