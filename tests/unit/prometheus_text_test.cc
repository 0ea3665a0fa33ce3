// The Prometheus exposition writer: one HELP/TYPE per family, labels escaped, numbers printed
// as Prometheus parses them.
#include "collector/metrics/prometheus_text.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gpuspy::collector {
namespace {

TEST(PrometheusText, FamiliesSamplesAndLabels) {
  PrometheusText m;
  m.Family("gpuspy_x_total", "counter", "Things");
  m.Sample(3);
  m.Sample(4, {{"result", "stored"}, {"job", "j1"}});
  m.Family("gpuspy_ratio", "gauge", "A ratio");
  m.Sample(0.25);
  m.Sample(std::nan(""));
  EXPECT_EQ(m.text(),
            "# HELP gpuspy_x_total Things\n# TYPE gpuspy_x_total counter\n"
            "gpuspy_x_total 3\n"
            "gpuspy_x_total{result=\"stored\",job=\"j1\"} 4\n"
            "# HELP gpuspy_ratio A ratio\n# TYPE gpuspy_ratio gauge\n"
            "gpuspy_ratio 0.25\n"
            "gpuspy_ratio NaN\n");
}

TEST(PrometheusText, LabelValuesAreEscaped) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  PrometheusText m;
  m.Family("f", "gauge", "h");
  m.Sample(1, {{"job", "we\"ird\njob"}});
  EXPECT_NE(m.text().find("f{job=\"we\\\"ird\\njob\"} 1\n"), std::string::npos) << m.text();
}

TEST(PrometheusText, LargeAndFractionalValuesKeepTheirPrecision) {
  PrometheusText m;
  m.Family("f", "counter", "h");
  m.Sample(12345678901234.0);
  m.Sample(1.5e-7);
  EXPECT_NE(m.text().find("f 12345678901234\n"), std::string::npos) << m.text();
  EXPECT_NE(m.text().find("f 1.5e-07\n"), std::string::npos) << m.text();
}

}  // namespace
}  // namespace gpuspy::collector
