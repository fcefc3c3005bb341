// SVG timeline: one row per device, several traces stacked on one time axis, bubbles visible.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/formats/pass_colors.h"
#include "sim/formats/svg_text.h"
#include "sim/formats/trace_writers.h"

namespace zb {

namespace {

constexpr double kWidth = 1200;      // px, whole picture
constexpr double kLeft = 64;         // px, room for device labels
constexpr double kRight = 16;
constexpr double kRowHeight = 20;
constexpr double kRowGap = 3;
constexpr double kTitleHeight = 34;  // label + metrics line above each trace
constexpr double kTraceGap = 14;
constexpr double kLegendHeight = 28;
constexpr double kAxisHeight = 30;
// Under each device row of a trace with copies (activation offload): a strip of two bars, the
// offloads (to the host) above the reloads (from it), which the two copy engines run at once.
constexpr double kCopyBarHeight = 4;
constexpr double kCopyStrip = 2 * kCopyBarHeight + 1;

// What a trace's drawing needs of all its spans, found in one walk: whether it has copies (its
// rows' pitch) and where its last span ends (every step it holds is drawn; its metrics are the
// first step's).
struct TraceExtent {
  bool copies = false;
  double end = 0;
  double pitch() const { return kRowHeight + kRowGap + (copies ? kCopyStrip : 0); }
};

TraceExtent extent_of(const Trace& trace) {
  TraceExtent extent{false, trace.metrics.makespan};
  for (const Span& span : trace.spans) {
    extent.copies |= span.stream == Stream::copy;
    extent.end = std::max(extent.end, span.end);
  }
  return extent;
}

// A lighter shade for chunks >= 1, so interleaved stages are told apart.
std::string shade(std::string_view hex, int chunk) {
  const double mix = chunk_lightening(chunk);
  if (mix == 0) return std::string(hex);
  auto channel = [&](int offset) {
    const int value = std::stoi(std::string(hex.substr(offset, 2)), nullptr, 16);
    return static_cast<int>(std::lround(value + (255 - value) * mix));
  };
  return fmt::format("#{:02X}{:02X}{:02X}", channel(1), channel(3), channel(5));
}

}  // namespace

std::string to_svg(const std::vector<LabeledTrace>& traces) {
  double horizon = 0;
  double rows_height = 0;
  bool copies = false;
  std::vector<TraceExtent> extents;
  for (const auto& labeled : traces) {
    const TraceExtent& extent = extents.emplace_back(extent_of(*labeled.trace));
    horizon = std::max(horizon, extent.end);
    rows_height += labeled.trace->devices * extent.pitch();
    copies |= extent.copies;
  }
  if (horizon <= 0) horizon = 1;
  const double plot_width = kWidth - kLeft - kRight;
  const double scale = plot_width / horizon;
  const double height =
      kLegendHeight + static_cast<double>(traces.size()) * (kTitleHeight + kTraceGap) + rows_height + kAxisHeight;
  const std::string unit = traces.empty() ? "" : std::string(time_unit_name(traces.front().trace->meta.time_unit));

  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"DejaVu Sans, Arial, sans-serif\">\n",
      kWidth, height, kWidth, height);
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";

  // Legend.
  double x = kLeft;
  for (Pass pass : {Pass::F, Pass::B, Pass::W, Pass::BW, Pass::O, Pass::L}) {
    if (is_copy(pass) && !copies) continue;
    out += fmt::format("<rect x=\"{}\" y=\"8\" width=\"14\" height=\"14\" fill=\"{}\"/>", x, pass_color(pass));
    const std::string name = pass == Pass::O ? "O offload" : pass == Pass::L ? "L reload" : std::string(pass_name(pass));
    out += fmt::format("<text x=\"{}\" y=\"20\" font-size=\"12\">{}</text>\n", x + 18, name);
    x += is_copy(pass) ? 90 : 60;
  }
  out += fmt::format("<rect x=\"{}\" y=\"8\" width=\"14\" height=\"14\" fill=\"{}\"/>", x, idle_color());
  out += fmt::format("<text x=\"{}\" y=\"20\" font-size=\"12\">idle (bubble)</text>\n", x + 18);

  double y = kLegendHeight;
  for (std::size_t t = 0; t < traces.size(); ++t) {
    const auto& [label, trace] = traces[t];
    const Metrics& metrics = trace->metrics;
    y += kTraceGap;
    out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"14\" font-weight=\"bold\">{}</text>\n", kLeft, y + 14,
                       xml_escape(label));
    double peak = 0;
    for (double value : metrics.peak_memory) peak = std::max(peak, value);
    out += fmt::format(
        "<text x=\"{}\" y=\"{}\" font-size=\"12\" fill=\"#333\">span {:.4g} {}   bubble rate {:.2f}%   makespan "
        "{:.4g} {}   peak memory {:.4g}</text>\n",
        kLeft, y + 29, metrics.span, time_unit_name(trace->meta.time_unit), 100 * metrics.bubble_rate, metrics.makespan,
        time_unit_name(trace->meta.time_unit), peak);
    y += kTitleHeight;
    const double rows_top = y;
    const double pitch = extents[t].pitch();
    const double end = extents[t].end;
    for (int d = 0; d < trace->devices; ++d) {
      const double row_y = rows_top + d * pitch;
      out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">d{}</text>\n", kLeft - 8,
                         row_y + 14, d);
      // The whole step is idle unless a pass covers it: bubbles are what stays pale red.
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\"/>\n", kLeft, row_y,
                         end * scale, kRowHeight, idle_color());
    }
    const std::vector<Span>& spans = trace->spans;
    for (std::size_t i = 0; i < spans.size(); ++i) {
      const Span& span = spans[i];
      if (span.stream == Stream::copy) {
        const double bar_y = rows_top + span.device * pitch + kRowHeight + 1 + (span.pass == Pass::O ? 0 : kCopyBarHeight);
        out += fmt::format(
            "<rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\"><title>{} stage {}: "
            "{:.6g}-{:.6g}</title></rect>\n",
            kLeft + span.start * scale, bar_y, span.duration() * scale, kCopyBarHeight, shade(pass_color(span.pass), span.chunk),
            to_token({span.pass, span.microbatch, span.chunk}), span.stage, span.start, span.end);
        continue;
      }
      if (span.stream != Stream::compute) continue;
      const double row_y = rows_top + span.device * pitch;
      const double box_x = kLeft + span.start * scale;
      const double box_w = span.duration() * scale;
      // The parts of an overlapped pair touch without a border: one box in two colours, outlined.
      const bool in_pair = span.overlap_next || (i > 0 && spans[i - 1].overlap_next);
      out += fmt::format(
          "<rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\"{}><title>{} stage {}: "
          "{:.6g}-{:.6g}</title></rect>",
          box_x, row_y, box_w, kRowHeight, shade(pass_color(span.pass), span.chunk),
          in_pair ? "" : " stroke=\"white\" stroke-width=\"0.5\"", to_token({span.pass, span.microbatch, span.chunk}),
          span.stage, span.start, span.end);
      if (i > 0 && spans[i - 1].overlap_next) {
        const Span& first = spans[i - 1];
        out += fmt::format(
            "<rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" fill=\"none\" stroke=\"white\" "
            "stroke-width=\"1.5\"><title>({};{}) overlapped: {:.6g}-{:.6g}</title></rect>",
            kLeft + first.start * scale, row_y, (span.end - first.start) * scale, kRowHeight,
            to_token({first.pass, first.microbatch, first.chunk}), to_token({span.pass, span.microbatch, span.chunk}),
            first.start, span.end);
      }
      if (box_w >= 14) {
        out += fmt::format(
            "<text x=\"{:.2f}\" y=\"{}\" font-size=\"{}\" fill=\"white\" text-anchor=\"middle\">{}</text>",
            box_x + box_w / 2, row_y + 14, box_w >= 22 ? 11 : 8, span.microbatch);
      }
      out += '\n';
    }
    y = rows_top + trace->devices * pitch;
  }

  // Time axis.
  const double step = round_axis_step(horizon, 10);
  out += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/>\n", kLeft, y + 4,
                     kLeft + plot_width, y + 4);
  for (int tick = 0; tick * step <= horizon * (1 + 1e-9); ++tick) {
    const double t = tick * step;
    const double tick_x = kLeft + t * scale;
    out += fmt::format("<line x1=\"{:.2f}\" y1=\"{}\" x2=\"{:.2f}\" y2=\"{}\" stroke=\"#333\"/>", tick_x, y + 4,
                       tick_x, y + 9);
    out += fmt::format("<text x=\"{:.2f}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{:g}</text>\n", tick_x,
                       y + 21, t);
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">{}</text>\n", kLeft - 8, y + 21,
                     xml_escape(unit));
  out += "</svg>\n";
  return out;
}

}  // namespace zb
