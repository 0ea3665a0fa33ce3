// gpuspyd's access control end to end (docs/security.md), with real daemons and real clients:
// tokens on ingest, query, control and HTTP; TLS with certificates made here by the openssl CLI;
// listeners beyond loopback refused without a token; the unix socket's peer credentials, with a
// second user (nobody) on the same daemon; an injected process with a wrong token.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <grp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpuspy/v1/services.grpc.pb.h"
#include "httplib.h"
#include "tests/support/gpuspyd.h"
#include "tests/support/subprocess.h"

namespace gpuspy {
namespace {

using testing::Process;
using testing::RunResult;

constexpr char kToken[] = "ingest-token-5f0c2a9e1b7d4c3a8e6f";
constexpr char kControlToken[] = "control-token-93b1e7c05d2a4f68b1c9";
constexpr uid_t kNobody = 65534;

void WriteFile(const std::string& path, const std::string& text, mode_t mode = 0600) {
  std::ofstream(path) << text << "\n";
  chmod(path.c_str(), mode);
}

// Runs `argv` as user nobody (setpriv), for the tests of a second local user.
std::vector<std::string> AsNobody(std::vector<std::string> argv) {
  std::vector<std::string> out = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"};
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

// GET `path` on 127.0.0.1:`port` as user `uid`, from a forked child; the HTTP status (0: none).
int HttpStatusAs(uid_t uid, int port, const std::string& path) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return 0;
  const pid_t child = fork();
  if (child == 0) {  // only system calls from here: this process has gRPC threads
    if (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0) _exit(10);
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) _exit(11);
    char request[512];
    const int n = snprintf(request, sizeof(request),
                           "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n",
                           path.c_str(), port);
    if (send(fd, request, static_cast<size_t>(n), MSG_NOSIGNAL) != n) _exit(12);
    char status[13] = {};
    size_t got = 0;
    while (got < 12) {
      const ssize_t r = read(fd, status + got, 12 - got);
      if (r <= 0) break;
      got += static_cast<size_t>(r);
    }
    (void)!write(pipe_fds[1], status, got);
    _exit(0);
  }
  close(pipe_fds[1]);
  char status[13] = {};
  ssize_t got = 0, r = 0;
  while (got < 12 && (r = read(pipe_fds[0], status + got, 12 - static_cast<size_t>(got))) > 0) got += r;
  close(pipe_fds[0]);
  waitpid(child, nullptr, 0);
  // "HTTP/1.1 200"
  return got == 12 ? std::atoi(status + 9) : 0;
}

using testing::Gpuspyd;

// A gpuspyd with the given extra flags over dir/store: TCP and HTTP on ephemeral loopback ports
// (unless `flags` set them, or `tcp` / `http` say none), no unix socket unless `flags` give one.
// Whether it came up shows in port() / http_port() (0 if not).
std::unique_ptr<Gpuspyd> StartDaemon(const std::string& dir, std::vector<std::string> flags,
                                     bool tcp = true, bool http = true) {
  auto d = std::make_unique<Gpuspyd>(testing::GpuspydOptions{
      .binary = GPUSPYD_BIN, .dir = dir, .port = tcp ? 0 : -1, .http = http,
      .log_level = "info", .flags = std::move(flags)});
  d->Start();
  return d;
}

class SecurityE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    token_file_ = dir_.path() + "/token";
    control_token_file_ = dir_.path() + "/control-token";
    WriteFile(token_file_, kToken);
    WriteFile(control_token_file_, kControlToken);
  }

  // A daemon requiring tokens on TCP (ingest/query and control).
  std::unique_ptr<Gpuspyd> TokenDaemon(std::vector<std::string> extra = {}) {
    std::vector<std::string> flags = {"--token-file", token_file_, "--control-token-file", control_token_file_};
    flags.insert(flags.end(), extra.begin(), extra.end());
    auto d = StartDaemon(dir_.path(), flags);
    EXPECT_GT(d->port(), 0) << d->log();
    return d;
  }

  static std::unique_ptr<grpc::ClientContext> Context(const std::string& token) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
    return ctx;
  }

  static grpc::Status ListJobs(grpc::Channel* channel, const std::string& token,
                               v1::ListJobsResponse* out = nullptr) {
    v1::ListJobsResponse resp;
    auto ctx = Context(token);
    return v1::Query::NewStub(std::shared_ptr<grpc::Channel>(channel, [](grpc::Channel*) {}))
        ->ListJobs(ctx.get(), {}, out != nullptr ? out : &resp);
  }

  static grpc::Status Attach(grpc::Channel* channel, const std::string& token, const std::string& job) {
    v1::AttachRequest req;
    req.set_job_id(job);
    req.set_rank(-1);
    req.mutable_capture()->set_steps(1);
    v1::AttachResponse resp;
    auto ctx = Context(token);
    return v1::Control::NewStub(std::shared_ptr<grpc::Channel>(channel, [](grpc::Channel*) {}))
        ->Attach(ctx.get(), req, &resp);
  }

  // Opens an ingest stream and says Hello (as `identity`, if given); the status the collector
  // ends it with.
  static grpc::Status Ingest(grpc::Channel* channel, const std::string& token,
                             const v1::ProcessIdentity* identity = nullptr) {
    auto ctx = Context(token);
    auto stub = v1::Ingest::NewStub(std::shared_ptr<grpc::Channel>(channel, [](grpc::Channel*) {}));
    auto stream = stub->Stream(ctx.get());
    v1::ClientMessage hello;
    if (identity != nullptr) *hello.mutable_hello()->mutable_identity() = *identity;
    hello.mutable_hello()->mutable_identity()->set_process_key("security-e2e:1:1");
    if (identity == nullptr) hello.mutable_hello()->mutable_identity()->set_job_id("raw-ingest");
    stream->Write(hello);
    stream->WritesDone();
    v1::ServerMessage m;
    while (stream->Read(&m)) {
    }
    return stream->Finish();
  }

  RunResult Cli(const std::string& address, std::vector<std::string> args,
                const std::vector<std::string>& env = {}) {
    std::vector<std::string> argv = {GPUSPY_BIN, "--collector", address};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::Run(argv, env);
  }

  // Makes a CA and a server certificate for 127.0.0.1/localhost signed by it (and, when asked, a
  // client certificate) with the openssl CLI; returns false if openssl is missing.
  bool MakeCertificates(const std::string& prefix) {
    const std::string d = dir_.path() + "/" + prefix;
    const std::string script =
        "set -e; cd " + dir_.path() + "; "
        "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=" + prefix + "-ca -keyout " + d + "ca.key -out " + d + "ca.pem 2>/dev/null; "
        "openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout " + d + "server.key -out " + d + "server.csr 2>/dev/null; "
        "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > " + d + "san.ext; "
        "openssl x509 -req -in " + d + "server.csr -CA " + d + "ca.pem -CAkey " + d + "ca.key -CAcreateserial -days 2 -extfile " + d + "san.ext -out " + d + "server.pem 2>/dev/null; "
        "openssl req -newkey rsa:2048 -nodes -subj /CN=client -keyout " + d + "client.key -out " + d + "client.csr 2>/dev/null; "
        "openssl x509 -req -in " + d + "client.csr -CA " + d + "ca.pem -CAkey " + d + "ca.key -CAcreateserial -days 2 -out " + d + "client.pem 2>/dev/null";
    return testing::Run({"/bin/sh", "-c", script}).exit_code == 0;
  }

  testing::TempDir dir_;
  std::string token_file_;
  std::string control_token_file_;
};

TEST_F(SecurityE2E, RefusesToListenBeyondLoopbackWithoutAToken) {
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--listen", "0.0.0.0:0", "--http", ""},
        std::vector<std::string>{"--listen", "127.0.0.1:0", "--http", "0.0.0.0:0"}}) {
    std::vector<std::string> argv = {GPUSPYD_BIN, "--unix", "", "--data-dir", dir_.path() + "/refused"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    RunResult r = testing::Run(argv, {}, std::chrono::seconds(20));
    EXPECT_NE(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("--token-file"), std::string::npos) << r.err;
  }
  // With a token, it starts.
  auto with_token = StartDaemon(dir_.path(), {"--listen", "0.0.0.0:0", "--port-file", dir_.path() + "/p1",
                                  "--http", "", "--token-file", token_file_});
  EXPECT_GT(testing::WaitForPortFile(dir_.path() + "/p1"), 0) << with_token->log();
}

TEST_F(SecurityE2E, InsecureAllowRemoteStartsWithoutAToken) {
  auto open = StartDaemon(dir_.path(), {"--listen", "0.0.0.0:0", "--port-file", dir_.path() + "/p2", "--http", "",
                            "--insecure-allow-remote"});
  EXPECT_GT(testing::WaitForPortFile(dir_.path() + "/p2"), 0) << open->log();
  EXPECT_NE(open->log().find("insecure-allow-remote"), std::string::npos) << open->log();
}

TEST_F(SecurityE2E, MissingOrWrongTokenIsUnauthenticatedOnIngestQueryAndControl) {
  auto d = TokenDaemon();
  auto channel = grpc::CreateChannel(d->address(), grpc::InsecureChannelCredentials());
  for (const std::string& token : {std::string(), std::string("wrong-token-wrong-token")}) {
    SCOPED_TRACE(token.empty() ? "no token" : "wrong token");
    EXPECT_EQ(ListJobs(channel.get(), token).error_code(), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(Attach(channel.get(), token, "j").error_code(), grpc::StatusCode::UNAUTHENTICATED);
    EXPECT_EQ(Ingest(channel.get(), token).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  }
  EXPECT_TRUE(ListJobs(channel.get(), kToken).ok());
  EXPECT_TRUE(ListJobs(channel.get(), kControlToken).ok());

  // The real clients: without the token they say why and fail; with it they work.
  RunResult no = Cli(d->address(), {"jobs"});
  EXPECT_NE(no.exit_code, 0);
  EXPECT_NE(no.err.find("requires a token"), std::string::npos) << no.err;
  RunResult replay_no = testing::Run({REPLAY_BIN, "--collector", d->address(), "--job", "tok", "--steps", "3"});
  EXPECT_NE(replay_no.exit_code, 0);
  ASSERT_EQ(testing::Run({REPLAY_BIN, "--collector", d->address(), "--job", "tok", "--steps", "3"},
                         {"GPUSPY_TOKEN_FILE=" + token_file_})
                .exit_code,
            0);
  RunResult yes = Cli(d->address(), {"--token-file", token_file_, "jobs"});
  EXPECT_EQ(yes.exit_code, 0) << yes.err;
  EXPECT_NE(yes.out.find("tok"), std::string::npos) << yes.out;
  RunResult env = Cli(d->address(), {"report", "--job", "tok", "--last", "1"}, {std::string("GPUSPY_TOKEN=") + kToken});
  EXPECT_EQ(env.exit_code, 0) << env.err;
}

TEST_F(SecurityE2E, QueryTokenCannotAttachAndControlTokenCannotIngest) {
  auto d = TokenDaemon();
  auto channel = grpc::CreateChannel(d->address(), grpc::InsecureChannelCredentials());
  grpc::Status st = Attach(channel.get(), kToken, "some-job");
  EXPECT_EQ(st.error_code(), grpc::StatusCode::PERMISSION_DENIED) << st.error_message();
  // The control token gets past access control; the job is unknown.
  st = Attach(channel.get(), kControlToken, "some-job");
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND) << st.error_message();
  EXPECT_EQ(Ingest(channel.get(), kControlToken).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  RunResult attach = Cli(d->address(), {"--token-file", token_file_, "attach", "--job", "x", "--steps", "1"});
  EXPECT_NE(attach.exit_code, 0);
  EXPECT_NE(attach.err.find("control token"), std::string::npos) << attach.err;
}

TEST_F(SecurityE2E, OversizedIdentitiesAndRequestFieldsAreRefused) {
  auto d = TokenDaemon();
  auto channel = grpc::CreateChannel(d->address(), grpc::InsecureChannelCredentials());
  const std::string big(5000, 'x');
  std::vector<v1::ProcessIdentity> bad(4);
  bad[0].set_launcher(big);
  bad[1].set_job_name(big);
  for (int i = 0; i < 300; ++i) bad[2].add_command_line(std::string(4000, 'a'));  // 1.2 MB in all
  for (int i = 0; i < 1025; ++i) bad[3].add_devices()->set_name("gpu");
  for (const v1::ProcessIdentity& id : bad) {
    grpc::Status st = Ingest(channel.get(), kToken, &id);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
  }
  v1::ProcessIdentity device_name;
  device_name.add_devices()->set_uuid(big);
  EXPECT_EQ(Ingest(channel.get(), kToken, &device_name).error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  auto query = v1::Query::NewStub(channel);
  v1::GetStepReportRequest report;
  report.set_job_id(big);
  v1::GetStepReportResponse report_response;
  EXPECT_EQ(query->GetStepReport(Context(kToken).get(), report, &report_response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  v1::AttachRequest attach;
  attach.set_job_id("j");
  attach.mutable_capture()->set_steps(1);
  for (int i = 0; i < 65; ++i) attach.mutable_capture()->add_kinds("kernel");
  v1::AttachResponse attach_response;
  EXPECT_EQ(v1::Control::NewStub(channel)->Attach(Context(kControlToken).get(), attach, &attach_response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  // Nothing of it was stored, and the daemon still serves.
  v1::ListJobsResponse jobs;
  ASSERT_TRUE(ListJobs(channel.get(), kToken, &jobs).ok());
  EXPECT_EQ(jobs.jobs_size(), 0);
}

TEST_F(SecurityE2E, TlsWithGeneratedCertificates) {
  ASSERT_TRUE(MakeCertificates("good-")) << "openssl failed";
  ASSERT_TRUE(MakeCertificates("other-"));
  const std::string p = dir_.path() + "/good-";
  auto d = TokenDaemon({"--tls-cert", p + "server.pem", "--tls-key", p + "server.key"});
  const std::vector<std::string> good_env = {"GPUSPY_TLS_CA=" + p + "ca.pem", "GPUSPY_TOKEN_FILE=" + token_file_};

  ASSERT_EQ(testing::Run({REPLAY_BIN, "--collector", d->address(), "--job", "tls", "--steps", "3"}, good_env)
                .exit_code,
            0);
  RunResult ok = Cli(d->address(), {"--tls-ca", p + "ca.pem", "--token-file", token_file_, "jobs"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("tls"), std::string::npos);

  // A CA that did not sign the server's certificate: the handshake fails.
  RunResult wrong_ca = Cli(d->address(), {"--tls-ca", dir_.path() + "/other-ca.pem", "--token-file", token_file_, "--timeout", "5", "jobs"});
  EXPECT_NE(wrong_ca.exit_code, 0);
  EXPECT_NE(wrong_ca.err.find("cannot reach"), std::string::npos) << wrong_ca.err;
  // Plaintext to the TLS port: no answer either.
  RunResult plain = Cli(d->address(), {"--token-file", token_file_, "--timeout", "5", "jobs"});
  EXPECT_NE(plain.exit_code, 0);

  // The HTTP port speaks TLS too.
  httplib::SSLClient https("127.0.0.1", d->http_port());
  https.set_ca_cert_path((p + "ca.pem").c_str());
  https.enable_server_certificate_verification(true);
  auto res = https.Get("/api/jobs", {{"Authorization", std::string("Bearer ") + kToken}});
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->body.find("tls"), std::string::npos);
}

TEST_F(SecurityE2E, MutualTlsNeedsAClientCertificate) {
  ASSERT_TRUE(MakeCertificates("m-"));
  const std::string p = dir_.path() + "/m-";
  auto d = TokenDaemon({"--tls-cert", p + "server.pem", "--tls-key", p + "server.key", "--tls-client-ca", p + "ca.pem"});
  RunResult no_cert = Cli(d->address(), {"--tls-ca", p + "ca.pem", "--token-file", token_file_, "--timeout", "5", "jobs"});
  EXPECT_NE(no_cert.exit_code, 0);
  RunResult with_cert = Cli(d->address(), {"--tls-ca", p + "ca.pem", "--token-file", token_file_, "jobs"},
                            {"GPUSPY_TLS_CERT=" + p + "client.pem", "GPUSPY_TLS_KEY=" + p + "client.key"});
  EXPECT_EQ(with_cert.exit_code, 0) << with_cert.err;
}

TEST_F(SecurityE2E, HttpNeedsTheTokenByHeaderOrCookie) {
  auto d = TokenDaemon();
  ASSERT_GT(d->http_port(), 0);
  httplib::Client c("127.0.0.1", d->http_port());
  auto anonymous = c.Get("/api/jobs");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401);
  EXPECT_TRUE(nlohmann::json::parse(anonymous->body).contains("error"));
  auto metrics = c.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 401);
  auto wrong = c.Get("/api/jobs", {{"Authorization", "Bearer nope-nope-nope-nope"}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  auto header = c.Get("/api/jobs", {{"Authorization", std::string("Bearer ") + kToken}});
  ASSERT_TRUE(header);
  EXPECT_EQ(header->status, 200);

  // The web viewer's way in: /?token=... sets the cookie and sends the browser back to /.
  auto login = c.Get((std::string("/?token=") + kToken).c_str());
  ASSERT_TRUE(login);
  EXPECT_EQ(login->status, 303);
  const std::string set_cookie = login->get_header_value("Set-Cookie");
  const std::string cookie = set_cookie.substr(0, set_cookie.find(';'));
  EXPECT_EQ(cookie, std::string("gpuspy_token=") + kToken);
  for (const char* path : {"/", "/api/jobs", "/metrics"}) {
    auto with_cookie = c.Get(path, {{"Cookie", cookie}});
    ASSERT_TRUE(with_cookie);
    EXPECT_EQ(with_cookie->status, 200) << path;
  }
}

TEST_F(SecurityE2E, LoopbackWithoutTokensServesOnlyTheDaemonsUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as a second user";
  auto d = StartDaemon(dir_.path(), {});
  ASSERT_GT(d->http_port(), 0) << d->log();
  ASSERT_EQ(testing::Run({REPLAY_BIN, "--collector", d->address(), "--job", "mine", "--steps", "3"}).exit_code, 0);
  // nobody on loopback TCP is known by its uid: it sees none of root's jobs, may not read them.
  RunResult jobs = testing::Run(AsNobody({GPUSPY_BIN, "--collector", d->address(), "--json", "jobs"}));
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_EQ(jobs.out.find("mine"), std::string::npos) << jobs.out;
  RunResult report = testing::Run(AsNobody({GPUSPY_BIN, "--collector", d->address(), "report", "--job", "mine"}));
  EXPECT_NE(report.exit_code, 0);
  EXPECT_NE(report.err.find("belongs to another user"), std::string::npos) << report.err;
  // The HTTP port (no token configured) serves root and refuses nobody.
  EXPECT_EQ(HttpStatusAs(0, d->http_port(), "/api/jobs"), 200);
  EXPECT_EQ(HttpStatusAs(kNobody, d->http_port(), "/api/jobs"), 403);
}

// The unix socket of a daemon every user may reach (--unix-shared): each user sees, queries,
// attaches to and joins only its own jobs; root sees everything. nobody plays the second user.
class SharedSocketE2E : public SecurityE2E {
 protected:
  void SetUp() override {
    SecurityE2E::SetUp();
    if (geteuid() != 0) GTEST_SKIP() << "needs root to act as a second user";
    chmod(dir_.path().c_str(), 0755);  // nobody must reach the socket's directory
    socket_ = dir_.path() + "/sock/gpuspyd.sock";
    daemon_ = StartDaemon(dir_.path(), std::vector<std::string>{"--unix", socket_, "--unix-shared"},
                                       /*tcp=*/true, /*http=*/false);
    ASSERT_GT(daemon_->port(), 0) << daemon_->log();
    address_ = "unix:" + socket_;
  }

  // A raw connection to the socket from uid `uid`, bound to abstract `name` ("" = unnamed):
  // true if the collector kept it open (answered the HTTP/2 preface with its settings).
  bool RawConnectionServed(uid_t uid, const std::string& name) {
    const pid_t child = fork();
    if (child == 0) {  // only system calls from here: this process has gRPC threads
      if (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0) _exit(10);
      const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      if (!name.empty()) {
        std::memcpy(addr.sun_path + 1, name.data(), name.size());
        if (bind(fd, reinterpret_cast<sockaddr*>(&addr),
                 static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size())) != 0) {
          _exit(11);
        }
      }
      sockaddr_un server{};
      server.sun_family = AF_UNIX;
      std::memcpy(server.sun_path, socket_.data(), socket_.size());
      if (connect(fd, reinterpret_cast<sockaddr*>(&server), sizeof(server)) != 0) _exit(12);
      static const char kPreface[] = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0";
      // MSG_NOSIGNAL: a connection the collector already shut down must not kill the child.
      if (send(fd, kPreface, sizeof(kPreface) - 1, MSG_NOSIGNAL) < 0) _exit(0);
      timeval timeout{5, 0};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
      char buf[64];
      _exit(read(fd, buf, sizeof(buf)) > 0 ? 1 : 0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) <= 1) << "child status " << status;
    return WIFEXITED(status) && WEXITSTATUS(status) == 1;
  }

  std::string socket_;
  std::string address_;
  std::unique_ptr<Gpuspyd> daemon_;
};

TEST_F(SharedSocketE2E, OtherUidSeesAndControlsOnlyItsOwnJobs) {
  ASSERT_EQ(testing::Run({REPLAY_BIN, "--collector", address_, "--job", "root-job", "--steps", "3"}).exit_code, 0);
  RunResult own = testing::Run(AsNobody({REPLAY_BIN, "--collector", address_, "--job", "nobody-job", "--steps", "3"}));
  ASSERT_EQ(own.exit_code, 0) << own.err;

  RunResult jobs = testing::Run(AsNobody({GPUSPY_BIN, "--collector", address_, "--json", "jobs"}));
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  nlohmann::json listed = nlohmann::json::parse(jobs.out);
  ASSERT_EQ(listed["jobs"].size(), 1u) << jobs.out;
  EXPECT_EQ(listed["jobs"][0]["job_id"], "nobody-job");
  EXPECT_EQ(listed["jobs"][0]["processes"][0]["identity"]["uid"], kNobody);
  RunResult own_report = testing::Run(AsNobody({GPUSPY_BIN, "--collector", address_, "report", "--job", "nobody-job", "--last", "1"}));
  EXPECT_EQ(own_report.exit_code, 0) << own_report.err;

  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"report", "--job", "root-job"},
        std::vector<std::string>{"events", "--job", "root-job"},
        std::vector<std::string>{"attach", "--job", "root-job", "--steps", "1"},
        std::vector<std::string>{"detach", "--job", "root-job"}}) {
    std::vector<std::string> argv = {GPUSPY_BIN, "--collector", address_};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult r = testing::Run(AsNobody(argv));
    EXPECT_NE(r.exit_code, 0) << args[0];
    EXPECT_NE(r.err.find("belongs to another user"), std::string::npos) << args[0] << ": " << r.err;
  }
  // Nor may it slip a process into another user's job.
  RunResult join = testing::Run(AsNobody({REPLAY_BIN, "--collector", address_, "--job", "root-job", "--steps", "3"}));
  EXPECT_NE(join.exit_code, 0);
  EXPECT_NE(join.err.find("belongs to another user"), std::string::npos) << join.err;

  // Root sees both, each owned by its uid.
  RunResult all = Cli(address_, {"--json", "jobs"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(nlohmann::json::parse(all.out)["jobs"].size(), 2u) << all.out;
}

TEST_F(SharedSocketE2E, PeerCredentialsMustMatchTheClaimedUid) {
  // Unnamed connections: only the daemon's own uid (root here).
  EXPECT_TRUE(RawConnectionServed(0, ""));
  EXPECT_FALSE(RawConnectionServed(kNobody, ""));
  // Named for one's own uid: served; named for someone else's: turned away.
  EXPECT_TRUE(RawConnectionServed(kNobody, "gpuspy-uid-65534-1-e2e"));
  EXPECT_FALSE(RawConnectionServed(kNobody, "gpuspy-uid-0-1-e2e"));
  EXPECT_FALSE(RawConnectionServed(kNobody, "gpuspy-uid-1000-1-e2e"));
  EXPECT_NE(daemon_->log().find("named its socket for uid 0"), std::string::npos) << daemon_->log();
  // The listener survived the refusals.
  EXPECT_EQ(Cli(address_, {"jobs"}).exit_code, 0);
}

#ifdef FAKE_TRAIN_BIN
// The injected core with a wrong token: one log line, the application runs to the end unharmed,
// nothing reaches the collector; with the right token its steps arrive.
TEST_F(SecurityE2E, InjectedProcessWithAWrongTokenLogsOnceAndRunsOn) {
  auto d = TokenDaemon();
  auto run = [&](const std::string& token, const std::string& job) {
    return testing::Run({FAKE_TRAIN_BIN, "--steps", "20", "--kernels", "4", "--sleep-us", "2000"},
                        {"LD_PRELOAD=" + std::string(SHIM_LIB), "GPUSPY_CUPTI_PATH=" + std::string(FAKE_CUPTI_LIB),
                         "GPUSPY_COLLECTOR=" + d->address(), "GPUSPY_JOB=" + job, "GPUSPY_TOKEN=" + token,
                         "GPUSPY_FLUSH_MS=20", "GPUSPY_EXIT_TIMEOUT_MS=1000", "GPUSPY_SPILL_DIR=" + dir_.path() + "/spill-" + job,
                         "GPUSPY_LOG=warn"});
  };
  RunResult wrong = run("wrong-token-wrong-token", "wrong");
  EXPECT_EQ(wrong.exit_code, 0) << wrong.err;
  size_t lines = 0;
  for (size_t at = wrong.err.find("wrong token"); at != std::string::npos; at = wrong.err.find("wrong token", at + 1)) ++lines;
  EXPECT_EQ(lines, 1u) << wrong.err;

  RunResult right = run(kToken, "right");
  EXPECT_EQ(right.exit_code, 0) << right.err;
  auto channel = grpc::CreateChannel(d->address(), grpc::InsecureChannelCredentials());
  v1::ListJobsResponse jobs;
  ASSERT_TRUE(ListJobs(channel.get(), kToken, &jobs).ok());
  ASSERT_EQ(jobs.jobs_size(), 1);
  EXPECT_EQ(jobs.jobs(0).job_id(), "right");
  EXPECT_GT(jobs.jobs(0).processes(0).event_count(), 0u);
}
#endif

}  // namespace
}  // namespace gpuspy

namespace gpuspy {
namespace {

// Deleting and renaming are the owner's or an admin's (docs/security.md): nobody may change only
// its own jobs, root any job.
TEST_F(SharedSocketE2E, OnlyTheOwnerOrAnAdminDeletesOrRenamesAJob) {
  ASSERT_EQ(testing::Run({REPLAY_BIN, "--collector", address_, "--job", "root-job", "--steps", "3"}).exit_code, 0);
  for (const char* job : {"nobody-job", "nobody-other"}) {
    RunResult own = testing::Run(AsNobody({REPLAY_BIN, "--collector", address_, "--job", job, "--steps", "3"}));
    ASSERT_EQ(own.exit_code, 0) << own.err;
  }
  for (const std::vector<std::string>& args : {std::vector<std::string>{"jobs", "delete", "root-job"},
                                               std::vector<std::string>{"jobs", "delete", "root-job", "--force"},
                                               std::vector<std::string>{"jobs", "rename", "root-job", "mine-now"}}) {
    std::vector<std::string> argv = {GPUSPY_BIN, "--collector", address_};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult r = testing::Run(AsNobody(argv));
    EXPECT_EQ(r.exit_code, 1) << args[1];
    EXPECT_NE(r.err.find("belongs to another user"), std::string::npos) << args[1] << ": " << r.err;
  }
  RunResult renamed = testing::Run(AsNobody({GPUSPY_BIN, "--collector", address_, "jobs", "rename", "nobody-job", "nobody-renamed"}));
  EXPECT_EQ(renamed.exit_code, 0) << renamed.err;
  RunResult deleted = testing::Run(AsNobody({GPUSPY_BIN, "--collector", address_, "jobs", "delete", "nobody-renamed"}));
  EXPECT_EQ(deleted.exit_code, 0) << deleted.err;
  // Root, an admin, may delete another user's job.
  RunResult admin = Cli(address_, {"jobs", "delete", "nobody-other"});
  EXPECT_EQ(admin.exit_code, 0) << admin.err;

  RunResult all = Cli(address_, {"--json", "jobs"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const nlohmann::json jobs = nlohmann::json::parse(all.out)["jobs"];
  ASSERT_EQ(jobs.size(), 1u) << all.out;
  EXPECT_EQ(jobs[0]["job_id"], "root-job");
}

// The ingest/query token reads; deleting and renaming need the control token, on gRPC and HTTP.
// And a browser page from another site cannot delete through the user's own HTTP session.
TEST_F(SecurityE2E, DeletingOrRenamingNeedsTheControlToken) {
  auto d = TokenDaemon();
  ASSERT_EQ(testing::Run({REPLAY_BIN, "--collector", d->address(), "--job", "j", "--steps", "3"},
                         {"GPUSPY_TOKEN=" + std::string(kToken)}).exit_code, 0);
  RunResult query_token = Cli(d->address(), {"--token-file", token_file_, "jobs", "delete", "j"});
  EXPECT_EQ(query_token.exit_code, 1);
  EXPECT_NE(query_token.err.find("may not delete or rename jobs"), std::string::npos) << query_token.err;
  RunResult rename_query = Cli(d->address(), {"--token-file", token_file_, "jobs", "rename", "j", "k"});
  EXPECT_NE(rename_query.err.find("control token"), std::string::npos) << rename_query.err;

  httplib::Client c("127.0.0.1", d->http_port());
  const httplib::Headers query = {{"Authorization", std::string("Bearer ") + kToken}};
  const httplib::Headers control = {{"Authorization", std::string("Bearer ") + kControlToken}};
  auto refused = c.Post("/api/jobs/j/rename?to=k", query, "", "text/plain");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 403) << refused->body;
  httplib::Headers cross_site = control;
  cross_site.emplace("Origin", "http://evil.example");
  auto cross = c.Delete("/api/jobs/j", cross_site);
  ASSERT_TRUE(cross);
  EXPECT_EQ(cross->status, 403) << cross->body;
  auto renamed = c.Post("/api/jobs/j/rename?to=k", control, "", "text/plain");
  ASSERT_TRUE(renamed);
  EXPECT_EQ(renamed->status, 200) << renamed->body;
  RunResult deleted = Cli(d->address(), {"--token-file", control_token_file_, "jobs", "delete", "k"});
  EXPECT_EQ(deleted.exit_code, 0) << deleted.err;
  auto gone = c.Get("/api/jobs", query);
  ASSERT_TRUE(gone);
  EXPECT_EQ(nlohmann::json::parse(gone->body)["jobs"].size(), 0u) << gone->body;
}

}  // namespace
}  // namespace gpuspy
