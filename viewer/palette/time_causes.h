// The one palette and the one set of names for the causes of a step's time (v1::TimeCause):
// the web viewer's bars, legends, timeline shading and verdict colours, and the HTML report's
// bars, all draw from this table. gpuspyd serves it to the viewer as the module
// /static/js/cause_colors.js, generated from it, so no copy exists in JavaScript.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "gpuspy/v1/report.pb.h"

namespace gpuspy::palette {

struct TimeCauseStyle {
  v1::TimeCause cause;
  const char* key;         // "comm_wait": the name scripts and CSS use
  const char* label;       // "comm: waiting for a rank": what a legend says
  const char* color;       // "#9c4f2b"
  bool comm;               // drawn only where the data has cross-rank communication
};

// Every cause, in TimeCause order (the order bars stack in).
std::span<const TimeCauseStyle> TimeCauseStyles();

// The style of `cause`; the "unexplained" one for a cause not in the table.
const TimeCauseStyle& StyleOf(v1::TimeCause cause);

// The JavaScript module the viewer imports as cause_colors.js: TIME_CAUSES (the table, keyed by
// the enum's JSON name) and CAUSE_COLORS (key -> colour).
std::string TimeCausesJsModule();

}  // namespace gpuspy::palette
