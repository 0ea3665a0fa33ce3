// The CPython frame walker against a real interpreter: libpython (LIBPYTHON, one binary per
// installed CPython version) is dlopen'ed RTLD_GLOBAL and runs scripts with known lines that
// call back into C through ctypes, as a CUDA call from Python would reach CUPTI's callback.
#include "inject/core/python_frames.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <thread>

#include "inject/core/call_site_registry.h"
#include "tests/support/embedded_python.h"

namespace gpuspy::inject {
namespace {

CallSiteRegistry* g_registry = nullptr;        // the site's own frame only
CallSiteRegistry* g_chain_registry = nullptr;  // and up to two callers
uint32_t g_site = 0;
uint32_t g_chain_site = 0;
bool g_had_gil = false;

// What CUPTI's callback does inside a CUDA call: is the GIL ours, and where are we.
extern "C" int Probe() {
  g_had_gil = PythonFrames::Instance().ThreadHoldsGil();
  g_site = g_registry->Capture();
  g_chain_site = g_chain_registry->Capture();
  return 0;
}

class PythonFramesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string error;
    run_ = testing::StartEmbeddedPython(LIBPYTHON, &error);
    ASSERT_NE(run_, nullptr) << error;
    CallSiteOptions options;
    options.native = false;
    options.base_dir = "/proj";
    // RunAs's wrapper runs as "<string>": never the user's line here.
    options.skip.push_back("<string>");
    options.callers = 0;
    g_registry = new CallSiteRegistry(options);
    options.callers = 2;
    g_chain_registry = new CallSiteRegistry(options);
  }

  // Runs `source` as the file `file` with `probe` (a ctypes function calling Probe) in scope.
  // PYFUNCTYPE keeps the GIL during the call (a C extension that does not release it);
  // CFUNCTYPE releases it (what PyTorch's bindings do around most ops).
  void RunAs(const std::string& file, const std::string& source, bool keep_gil = true) {
    g_site = 0;
    g_had_gil = false;
    char address[32];
    std::snprintf(address, sizeof(address), "%llu",
                  static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(&Probe)));
    const std::string script =
        "import ctypes\n"
        "probe = ctypes." + std::string(keep_gil ? "PYFUNCTYPE" : "CFUNCTYPE") +
        "(ctypes.c_int)(" + address + ")\n"
        "exec(" + Compile(source, file) + ", {'probe': probe, '__name__': '__main__'})\n";
    ASSERT_EQ(run_(script.c_str()), 0) << script;
  }
  // Python source text that compiles `source` as if it were the file `file`.
  static std::string Compile(const std::string& source, const std::string& file) {
    return "compile(" + Quote(source) + ", " + Quote(file) + ", 'exec')";
  }
  static std::string Quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
      if (c == '\n') out += "\\n";
      else if (c == '\'' || c == '\\') out += std::string("\\") + c;
      else out += c;
    }
    return out + "'";
  }
  std::string Site() const { return std::string(g_registry->Text(g_site)); }
  std::string Chain() const { return std::string(g_chain_registry->Text(g_chain_site)); }

  static inline testing::RunPython run_ = nullptr;
};

TEST_F(PythonFramesTest, CallFromPythonNamesFileLineAndFunction) {
  RunAs("/proj/train.py",
        "def train_step():\n"
        "    x = 1\n"
        "    probe()\n"
        "train_step()\n");
  EXPECT_TRUE(g_had_gil);
  EXPECT_EQ(Site(), "train.py:3 train_step");
}

TEST_F(PythonFramesTest, MethodsAreNamedByQualifiedNameWhereCPythonHasIt) {
  RunAs("/proj/model.py",
        "class Trainer:\n"
        "    def step(self):\n"
        "        probe()\n"
        "Trainer().step()\n");
  // co_qualname is 3.11+; co_name before.
  EXPECT_TRUE(Site() == "model.py:3 Trainer.step" || Site() == "model.py:3 step") << Site();
}

TEST_F(PythonFramesTest, TorchInternalsAreWalkedPastToTheUserLine) {
  // A "torch" module's function, called from user code at a known line.
  const std::string torch_file = "/venv/lib/python3.11/site-packages/torch/cuda/__init__.py";
  RunAs("/proj/loop.py",
        "ns = {'probe': probe}\n"
        "exec(" + Compile("def synchronize():\n    probe()\n", torch_file) + ", ns)\n"
        "def main():\n"
        "    for i in range(2):\n"
        "        ns['synchronize']()\n"
        "main()\n");
  EXPECT_EQ(Site(), "loop.py:5 main");
}

// GPUSPY_CALLSITE_CALLERS: a helper's line names who called it, library frames between them
// walked past, at most the configured number of callers.
TEST_F(PythonFramesTest, CallersAreKeptOutwardPastLibraryFrames) {
  const std::string torch_file = "/venv/lib/python3.11/site-packages/torch/nn/module.py";
  RunAs("/proj/deep.py",
        "ns = {}\n"
        "exec(" + Compile("def call(f):\n    return f()\n", torch_file) + ", ns)\n"
        "def log_metrics():\n"
        "    probe()\n"
        "def train_step():\n"
        "    ns['call'](log_metrics)\n"
        "def main():\n"
        "    train_step()\n"
        "def outer():\n"
        "    main()\n"
        "outer()\n");
  EXPECT_EQ(Site(), "deep.py:4 log_metrics");
  EXPECT_EQ(Chain(), "deep.py:4 log_metrics \u2190 deep.py:6 train_step \u2190 deep.py:8 main");
}

TEST_F(PythonFramesTest, TheSameLineFromAnotherCallerIsAnotherSite) {
  RunAs("/proj/two.py",
        "def helper():\n"
        "    probe()\n"
        "def a():\n"
        "    helper()\n"
        "def b():\n"
        "    helper()\n"
        "a()\n"
        "first = 1\n");
  const uint32_t from_a = g_chain_site;
  const uint32_t own_a = g_site;
  RunAs("/proj/two.py",
        "def helper():\n"
        "    probe()\n"
        "def a():\n"
        "    helper()\n"
        "def b():\n"
        "    helper()\n"
        "b()\n");
  EXPECT_EQ(Chain(), "two.py:2 helper \u2190 two.py:6 b \u2190 two.py:7 <module>");
  EXPECT_NE(g_chain_site, from_a);
  EXPECT_EQ(Site(), std::string(g_registry->Text(own_a)));  // without callers: the same line
}

TEST_F(PythonFramesTest, OnlyLibraryFramesGiveTheInnermostOne) {
  RunAs("/venv/lib/python3.11/site-packages/torch/utils/data.py",
        "def fetch():\n"
        "    probe()\n"
        "fetch()\n");
  EXPECT_EQ(Site(), "torch/utils/data.py:2 fetch");
}

TEST_F(PythonFramesTest, ARepeatedSiteIsTheSameIdAndNoNewText) {
  RunAs("/proj/again.py",
        "def f():\n"
        "    for i in range(3):\n"
        "        probe()\n"
        "f()\n");
  const uint32_t first = g_site;
  const uint32_t sites = g_registry->sites();
  RunAs("/proj/again.py",
        "def f():\n"
        "    for i in range(3):\n"
        "        probe()\n"
        "f()\n");
  // A fresh compile is a new code object with the same file:line: same text, possibly a new id.
  EXPECT_EQ(Site(), "again.py:3 f");
  EXPECT_LE(g_registry->sites(), sites + 1);
  EXPECT_NE(first, 0u);
}

TEST_F(PythonFramesTest, HandledExceptionAndPendingStateSurviveTheWalk) {
  RunAs("/proj/exc.py",
        "import sys\n"
        "def f():\n"
        "    try:\n"
        "        raise ValueError('kept')\n"
        "    except ValueError:\n"
        "        probe()\n"
        "        assert sys.exc_info()[0] is ValueError\n"
        "        assert str(sys.exc_info()[1]) == 'kept'\n"
        "f()\n");
  EXPECT_EQ(Site(), "exc.py:6 f");
}

TEST_F(PythonFramesTest, CallWithoutTheGilGetsNoPythonFrame) {
  RunAs("/proj/nogil.py",
        "def f():\n"
        "    probe()\n"
        "f()\n",
        /*keep_gil=*/false);
  EXPECT_FALSE(g_had_gil);
  EXPECT_EQ(g_site, 0u);
}

TEST_F(PythonFramesTest, ThreadWithoutPythonStateGetsNothingAndDoesNotCrash) {
  bool holds = true;
  uint32_t site = 1;
  std::thread([&] {
    holds = PythonFrames::Instance().ThreadHoldsGil();
    site = g_registry->Capture();
  }).join();
  EXPECT_FALSE(holds);
  EXPECT_EQ(site, 0u);
}

}  // namespace
}  // namespace gpuspy::inject
