// MPI under multi-process runs: when to use it, and the transport over zbexec's MPI module.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "exec/multiprocess/launcher_env.h"
#include "exec/runtime/transport.h"

namespace zb::exec {

// --mpi: auto (when launched by an MPI launcher), on, off (one process, devices as threads).
enum class MpiMode { automatic, on, off };
MpiMode parse_mpi_mode(std::string_view text);  // throws InputError naming --mpi

// Whether this process is one rank of an MPI job: `on` always, `off` never; `automatic` when
// the launcher says the job has more than one process (OMPI_COMM_WORLD_SIZE from mpirun,
// SLURM_STEP_NUM_TASKS from srun, PMI_SIZE from MPICH's and Intel's launchers; a job of one
// process stays an ordinary single-process run). Returns what decided, e.g.
// "OMPI_COMM_WORLD_SIZE=4", or "" for no MPI.
std::string mpi_launch_reason(MpiMode mode, const EnvLookup& env = process_env);

// Where the MPI module is looked for: $ZBEXEC_MPI_MODULE, else libzbexec_mpi.so next to the
// zbexec executable (the build puts it there).
std::string mpi_module_path();

// Loads the module with dlopen (so zbexec needs no MPI library unless a run uses MPI) and
// initialises MPI with MPI_THREAD_MULTIPLE. Throws InputError naming the module path and the
// loader's reason when it cannot be loaded (no MPI library on this machine, say), ExecError when
// MPI fails to initialise or gives a lower thread level. `reason`: mpi_launch_reason's answer,
// for the messages.
std::unique_ptr<Transport> start_mpi(const std::string& reason);

}  // namespace zb::exec
