// A user's own hardware: a CSV file with a header and one row describing one
// GPU and its node (docs/HARDWARE.md). Columns are taken by their header
// names in any case and order; the numeric ones are those of
// ../shared/data/llm/gpu_specs_catalog.csv, so one of its rows can be pasted
// (with its header: its `device` is the name, and its columns the models do
// not use are read past):
//
//   name,base,fp16_tensor_dense_tflops,bf16_tensor_dense_tflops,tf32_tensor_tflops,fp32_tflops,
//   mem_GB,mem_bw_GBps,fp32_sustained,tensor_sustained,gpus_per_node,intra_node_bw_GBps,
//   inter_node_bw_GBps,intra_link,inter_link,full_name,source,notes
//
// and optionally fp8_tflops (default 0: no FP8 unit), fp8_matmul_share
// (GpuSpec; default 1, > 0), tf32_kernel_share (GpuSpec; default 0.42, the
// share measured on an H200) and collective_latency_exponent (NodeSpec;
// default 0, in [0, 1)) and gpus_per_host (NodeSpec; default gpus_per_node;
// from 1 to gpus_per_node: the GPUs of one operating system where NVLink
// reaches further, as a GB200 NVL72's 4 a tray).
//
// `name` is required. `base`, a built-in catalog name, fills every column the
// file leaves out or empty. Without a base, fp32_tflops, mem_bw_GBps,
// gpus_per_node, intra_node_bw_GBps and inter_node_bw_GBps are required.
#pragma once
#include <string>

#include "structure/gpu_catalog.h"

namespace trainplan::io {

// Reads a hardware file. Throws InputError naming the file, the line and the
// column on: a missing required column, an unknown column, an empty name, a
// non-number, a negative or zero figure where one must be > 0, an unknown
// base, or more or fewer than one data row.
structure::HardwareProfile read_hardware_file(const std::string& path);

// Whether resolve_hardware would read `name_or_path` as a file (a path, or a
// word the catalog does not know), for callers that must not write over it.
bool names_hardware_file(const std::string& name_or_path);

// A built-in catalog name (or alias) or the path of a hardware file: a word
// with a '/' is always a path ("./l4" is the file, not the catalog's L4). Throws
// InputError naming `option` (a command-line option such as "--to-gpu")
// and listing the catalog when `name_or_path` is neither.
structure::HardwareProfile resolve_hardware(const std::string& name_or_path, const std::string& option = "");

// resolve_hardware for the transformer verbs, which need the GPU's memory: a
// file that gives none (no mem_GB, no base) is refused, naming it and mem_GB.
structure::HardwareProfile resolve_llm_hardware(const std::string& name_or_path, const std::string& option = "");

}  // namespace trainplan::io
