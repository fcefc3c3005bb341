// The process-wide cancellation request (see cancellation.h).
#include "sim/support/cancellation.h"

#include <atomic>

namespace zb {

namespace {
std::atomic<bool> g_cancel{false};
}  // namespace

void request_cancel() noexcept { g_cancel.store(true); }
void clear_cancel() noexcept { g_cancel.store(false); }
bool cancel_requested() noexcept { return g_cancel.load(std::memory_order_relaxed); }

}  // namespace zb
