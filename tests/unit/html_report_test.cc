// The HTML report (exporters/html_report/) is a page to send a colleague: title the job, findings
// open with gain and fix, top kernels, the communication split in the comm colour, GPU time by
// class, memory, a per-step timeline; colours from the one palette (viewer/palette/).
#include "exporters/html_report/html_report_writer.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "viewer/palette/kernel_classes.h"
#include "viewer/palette/time_causes.h"

namespace gpuspy::exporters {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::JobSummary Summary() {
  v1::JobSummary s;
  s.set_job_id("ddp-bert");
  s.set_process_count(2);
  s.set_step_count(3);
  s.set_steady_step_count(2);
  auto* k = s.add_top_kernels();
  k->set_name("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)");
  k->set_count(12);
  k->set_total_ns(31'000'000);
  auto* c = s.add_kernel_classes();
  c->set_kernel_class("comm");
  c->set_ns(31'000'000);
  c->set_share(0.62);
  auto* r = s.add_ranks();
  r->set_rank(1);
  r->set_median_wall_ns(50'000'000);
  r->set_median_exposed_comm_ns(31'000'000);
  r->set_median_wait_ns(20'000'000);
  auto* wait = r->add_median_parts();
  wait->set_cause(v1::TIME_CAUSE_COMM_WAIT);
  wait->set_ns(20'000'000);
  s.mutable_compare_ranks()->set_a(0);
  s.mutable_compare_ranks()->set_b(1);
  return s;
}

v1::GetStepReportResponse Reports() {
  v1::GetStepReportResponse resp;
  for (int64_t n : {5, 6, 7}) {
    v1::StepReport* r = resp.add_reports();
    r->mutable_step()->set_process_id(1);
    r->mutable_step()->set_number(n);
    r->mutable_step()->set_source("nvtx:ProfilerStep#(\\d+)");
    r->mutable_breakdown()->set_wall_ns(50'000'000);
    auto* part = r->mutable_breakdown()->add_parts();
    part->set_cause(v1::TIME_CAUSE_COMM_TRANSFER);
    part->set_ns(11'000'000);
    r->set_steady_state(n != 7);
    r->set_primary_bottleneck(v1::straggler_wait);
    auto* f = r->add_findings();
    f->set_detector(v1::straggler_wait);
    f->set_severity(v1::warning);
    f->set_title("waits 20.00 ms for rank 0");
    f->set_lost_ns(12'345'678);
    f->set_fix_hint("balance the input pipeline of rank 0");
    f->mutable_what_if()->set_fix("rank 0 keeps up");
    f->mutable_what_if()->set_gain_ns(9'870'000);
    auto* e = f->add_evidence();
    e->set_key("waited_for");
    e->set_value("rank 0");
    if (n == 6) {
      r->mutable_memory()->set_source("segments");
      r->mutable_memory()->set_reserved_peak_bytes(3ll << 30);
    }
  }
  return resp;
}

TEST(HtmlReport, TitledByTheJobAndTheRanksByNumber) {
  v1::RunDiff diff;
  diff.set_a_label("ddp-bert@0");
  diff.set_b_label("ddp-bert@1");
  const std::string page = ReportHtml(Summary(), Reports(), {{1, "1"}}, &diff);
  EXPECT_THAT(page, HasSubstr("<title>gpuspy report: ddp-bert</title>"));
  EXPECT_THAT(page, HasSubstr("Ranks compared: rank 0 vs rank 1"));
  EXPECT_THAT(page, Not(HasSubstr("ddp-bert@0 vs")));
}

TEST(HtmlReport, FindingsAreOpenWithGainEvidenceAndFix) {
  const std::string page = ReportHtml(Summary(), Reports(), {{1, "1"}});
  EXPECT_THAT(page, Not(HasSubstr("<details")));
  EXPECT_THAT(page, HasSubstr("<section class=step-findings id=\"s1-5\">"));
  EXPECT_THAT(page, HasSubstr("~12.35 ms lost"));
  EXPECT_THAT(page, HasSubstr("data-gain-ns=\"9870000\""));
  EXPECT_THAT(page, HasSubstr("<code>waited_for</code> rank 0"));
  EXPECT_THAT(page, HasSubstr("<b>fix:</b> balance the input pipeline of rank 0"));
}

TEST(HtmlReport, TopKernelsGpuTimeAndTheCommunicationSplitInTheCommColour) {
  const std::string page = ReportHtml(Summary(), Reports(), {{1, "1"}});
  EXPECT_THAT(page, HasSubstr("<h2 id=top-kernels>"));
  EXPECT_THAT(page, HasSubstr("ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
  // The 62 %-communication GPU time is its own class, in the comm colour, not "kernels".
  const char* comm_class = palette::StyleOfClass("comm").color;
  EXPECT_THAT(page, HasSubstr(std::string("data-class=\"comm\" style=\"width:62.000%;background:") + comm_class));
  // The rank's exposed communication, and its wait drawn in the palette's comm-wait brown.
  EXPECT_THAT(page, HasSubstr("31.00 ms (62%)"));
  EXPECT_THAT(page, HasSubstr(std::string("data-cause=\"TIME_CAUSE_COMM_WAIT\" data-ns=\"20000000\" "
                                          "style=\"width:40.000%;background:") +
                              palette::StyleOf(v1::TIME_CAUSE_COMM_WAIT).color));
}

TEST(HtmlReport, MemoryOnlyWhereKnownAndATimelineOfEveryStep) {
  const std::string page = ReportHtml(Summary(), Reports(), {{1, "1"}});
  EXPECT_THAT(page, HasSubstr("<h2 id=memory>"));
  EXPECT_THAT(page, HasSubstr("data-reserved-peak-bytes=\"3221225472\""));
  EXPECT_THAT(page, HasSubstr("3072.0 MiB"));
  EXPECT_THAT(page, HasSubstr("<h2 id=timeline>"));
  for (const char* step : {"data-step=\"5\" style=\"flex-grow:50.000\"", "data-step=\"7\""}) {
    EXPECT_THAT(page, HasSubstr(step));
  }
  EXPECT_THAT(page, HasSubstr("class=\"tl-step unsteady\" href=\"#s1-7\""));

  v1::GetStepReportResponse no_memory = Reports();
  for (v1::StepReport& r : *no_memory.mutable_reports()) r.clear_memory();
  EXPECT_THAT(ReportHtml(Summary(), no_memory, {}), Not(HasSubstr("<h2 id=memory>")));
}

TEST(HtmlReport, SelfContained) {
  const std::string page = ReportHtml(Summary(), Reports(), {{1, "1"}});
  EXPECT_THAT(page, Not(HasSubstr("<script")));
  EXPECT_THAT(page, Not(HasSubstr("http://")));
  EXPECT_THAT(page, Not(HasSubstr("https://")));
}

TEST(Palette, TheViewerModuleCarriesTheKernelClassColoursTheReportUses) {
  const std::string module = palette::TimeCausesJsModule();
  EXPECT_THAT(module, HasSubstr("export const KERNEL_CLASSES"));
  EXPECT_THAT(module, HasSubstr(std::string("\"comm\":{\"color\":\"") + palette::StyleOfClass("comm").color));
  EXPECT_STREQ(palette::StyleOfClass("no_such_class").key, "other");
}

}  // namespace
}  // namespace gpuspy::exporters
