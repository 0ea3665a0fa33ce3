#include "collector/storage/pg_connection.h"

#include <libpq-fe.h>
#include <poll.h>

#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "spdlog/spdlog.h"

namespace gpuspy::collector {
namespace {

// Type Oids from pg_type.h (server headers are not part of libpq-dev).
constexpr unsigned int kBoolOid = 16;
constexpr unsigned int kByteaOid = 17;
constexpr unsigned int kInt8Oid = 20;
constexpr unsigned int kInt2Oid = 21;
constexpr unsigned int kInt4Oid = 23;
constexpr unsigned int kTextOid = 25;
constexpr unsigned int kOidOid = 26;
constexpr unsigned int kTextArrayOid = 1009;
constexpr unsigned int kInt8ArrayOid = 1016;

// libpq messages end in a newline and may span lines ("connection to server at ... failed:
// Connection refused\n\tIs the server running ...\n"): one line for logs and statuses.
std::string OneLine(const char* message) {
  std::string s = message == nullptr ? "" : message;
  absl::StrReplaceAll({{"\n\t", " "}, {"\n", "; "}}, &s);
  absl::StripTrailingAsciiWhitespace(&s);
  while (!s.empty() && (s.back() == ';' || s.back() == ' ')) s.pop_back();
  return s;
}

uint64_t BigEndian(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

void LogNotice(void*, const char* message) { spdlog::debug("postgres: {}", OneLine(message)); }

}  // namespace

PgParams& PgParams::Int(int64_t v) {
  owned_.push_back(absl::StrCat(v));  // a deque: earlier c_str() pointers stay valid
  values_.push_back(owned_.back().c_str());
  lengths_.push_back(0);
  formats_.push_back(0);
  types_.push_back(kInt8Oid);
  return *this;
}

PgParams& PgParams::Bool(bool v) {
  values_.push_back(v ? "t" : "f");
  lengths_.push_back(0);
  formats_.push_back(0);
  types_.push_back(kBoolOid);
  return *this;
}

PgParams& PgParams::Text(std::string_view v) {
  values_.push_back(v.data() == nullptr ? "" : v.data());
  lengths_.push_back(static_cast<int>(v.size()));
  formats_.push_back(1);
  types_.push_back(kTextOid);
  return *this;
}

PgParams& PgParams::IntArray(const std::vector<int64_t>& v) {
  owned_.push_back(absl::StrCat("{", absl::StrJoin(v, ","), "}"));
  values_.push_back(owned_.back().c_str());
  lengths_.push_back(0);
  formats_.push_back(0);
  types_.push_back(kInt8ArrayOid);
  return *this;
}

PgParams& PgParams::TextArray(const std::vector<std::string>& v) {
  // Array literal: every element quoted, backslash and quote escaped.
  std::string lit = "{";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) lit += ',';
    lit += '"';
    for (char c : v[i]) {
      if (c == '"' || c == '\\') lit += '\\';
      lit += c;
    }
    lit += '"';
  }
  lit += '}';
  owned_.push_back(std::move(lit));
  values_.push_back(owned_.back().c_str());
  lengths_.push_back(0);
  formats_.push_back(0);
  types_.push_back(kTextArrayOid);
  return *this;
}

PgParams& PgParams::Bytes(std::string_view v) {
  values_.push_back(v.data() == nullptr ? "" : v.data());
  lengths_.push_back(static_cast<int>(v.size()));
  formats_.push_back(1);
  types_.push_back(kByteaOid);
  return *this;
}

PgResult& PgResult::operator=(PgResult&& o) noexcept {
  if (this != &o) {
    if (r_ != nullptr) PQclear(r_);
    r_ = o.r_;
    o.r_ = nullptr;
  }
  return *this;
}

PgResult::~PgResult() {
  if (r_ != nullptr) PQclear(r_);
}

int PgResult::rows() const { return r_ == nullptr ? 0 : PQntuples(r_); }
int PgResult::columns() const { return r_ == nullptr ? 0 : PQnfields(r_); }
bool PgResult::IsNull(int row, int col) const { return PQgetisnull(r_, row, col) != 0; }

int64_t PgResult::Int(int row, int col) const {
  if (PQgetisnull(r_, row, col)) return 0;
  const char* p = PQgetvalue(r_, row, col);
  if (PQfformat(r_, col) == 0) {
    int64_t v = 0;
    (void)absl::SimpleAtoi(p, &v);
    return v;
  }
  switch (PQftype(r_, col)) {
    case kInt8Oid:
      return static_cast<int64_t>(BigEndian(p, 8));
    case kInt4Oid:
      return static_cast<int32_t>(BigEndian(p, 4));
    case kOidOid:
      return static_cast<int64_t>(BigEndian(p, 4));
    case kInt2Oid:
      return static_cast<int16_t>(BigEndian(p, 2));
    case kBoolOid:
      return p[0] != 0 ? 1 : 0;
    default:
      spdlog::error("postgres: column {} has type oid {}, read as an integer", col, PQftype(r_, col));
      return 0;
  }
}

std::string_view PgResult::Bytes(int row, int col) const {
  return std::string_view(PQgetvalue(r_, row, col), static_cast<size_t>(PQgetlength(r_, row, col)));
}

absl::StatusCode StatusCodeForSqlState(std::string_view s) {
  if (s.size() != 5) return absl::StatusCode::kInternal;
  const std::string_view cls = s.substr(0, 2);
  if (cls == "08") return absl::StatusCode::kUnavailable;           // connection exception
  if (s == "57P01" || s == "57P02" || s == "57P03") {
    return absl::StatusCode::kUnavailable;                          // shutdown, starting up
  }
  if (s == "57014") return absl::StatusCode::kCancelled;             // query canceled
  if (cls == "53") return absl::StatusCode::kResourceExhausted;      // disk full, out of memory
  if (cls == "54") return absl::StatusCode::kResourceExhausted;      // program limit exceeded
  if (cls == "40") return absl::StatusCode::kAborted;                // serialization, deadlock
  if (s == "23505") return absl::StatusCode::kAlreadyExists;         // unique violation
  if (cls == "23") return absl::StatusCode::kFailedPrecondition;     // other constraints
  if (cls == "22") return absl::StatusCode::kInvalidArgument;        // data exception
  if (cls == "28" || s == "42501") return absl::StatusCode::kPermissionDenied;
  if (s == "3D000" || s == "3F000") return absl::StatusCode::kNotFound;  // no such db/schema
  if (s == "55P03") return absl::StatusCode::kUnavailable;           // lock not available
  return absl::StatusCode::kInternal;
}

absl::StatusOr<std::string> DescribeConninfo(const std::string& conninfo) {
  char* err = nullptr;
  PQconninfoOption* opts = PQconninfoParse(conninfo.c_str(), &err);
  if (opts == nullptr) {
    std::string msg = OneLine(err);
    PQfreemem(err);
    return absl::InvalidArgumentError(absl::StrCat("bad PostgreSQL connection string: ", msg));
  }
  std::map<std::string, std::string> v;
  for (PQconninfoOption* o = opts; o->keyword != nullptr; ++o) {
    if (o->val != nullptr && *o->val != '\0') v[o->keyword] = o->val;
  }
  PQconninfoFree(opts);
  auto get = [&](const char* key, const char* env, const char* fallback) {
    if (auto it = v.find(key); it != v.end()) return it->second;
    if (const char* e = std::getenv(env); e != nullptr && *e != '\0') return std::string(e);
    return std::string(fallback);
  };
  std::string host = get("host", "PGHOST", "");
  if (host.empty()) host = get("hostaddr", "PGHOSTADDR", "(default unix socket)");
  return absl::StrCat("host=", host, " port=", get("port", "PGPORT", "5432"),
                      " dbname=", get("dbname", "PGDATABASE", "(user name)"),
                      " user=", get("user", "PGUSER", "(login name)"));
}

absl::StatusOr<std::unique_ptr<PgConnection>> PgConnection::Connect(PgConnectOptions options) {
  absl::StatusOr<std::string> where = DescribeConninfo(options.conninfo);
  if (!where.ok()) return where.status();
  std::unique_ptr<PgConnection> c(new PgConnection(std::move(options)));
  c->where_ = *where;
  if (absl::Status st = c->Open(); !st.ok()) return st;
  return c;
}

PgConnection::~PgConnection() {
  if (conn_ != nullptr) PQfinish(conn_);
}

absl::Status PgConnection::Open() {
  if (conn_ != nullptr) PQfinish(conn_);
  prepared_.clear();
  const std::string timeout = absl::StrCat(options_.connect_timeout_s);
  // Keywords before "dbname" are defaults: what the connection string says overrides them.
  const char* keywords[] = {"connect_timeout", "fallback_application_name", "client_encoding",
                            "dbname", nullptr};
  const char* values[] = {timeout.c_str(), "gpuspyd", "UTF8", options_.conninfo.c_str(), nullptr};
  conn_ = PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  if (conn_ == nullptr) return absl::ResourceExhaustedError("libpq could not allocate a connection");
  if (PQstatus(conn_) != CONNECTION_OK) {
    // PQhost/PQport say which server was tried (libpq fills in its defaults).
    const char* host = PQhost(conn_);
    const char* port = PQport(conn_);
    if (host != nullptr && *host != '\0' && port != nullptr && *port != '\0') {
      where_ = absl::StrCat("host=", host, " port=", port, " dbname=", PQdb(conn_) ? PQdb(conn_) : "",
                            " user=", PQuser(conn_) ? PQuser(conn_) : "");
    }
    const std::string msg = OneLine(PQerrorMessage(conn_));
    PQfinish(conn_);
    conn_ = nullptr;
    // Refused, unreachable, timed out, server starting/stopping: all "try again later" to callers.
    // Authentication and missing databases are configuration errors.
    absl::StatusCode code = absl::StatusCode::kUnavailable;
    if (msg.find("authentication failed") != std::string::npos ||
        msg.find("password") != std::string::npos) {
      code = absl::StatusCode::kPermissionDenied;
    } else if (msg.find("does not exist") != std::string::npos) {
      code = absl::StatusCode::kNotFound;
    }
    return absl::Status(code, absl::StrCat("cannot connect to PostgreSQL at ", where_, ": ", msg));
  }
  where_ = absl::StrCat("host=", PQhost(conn_), " port=", PQport(conn_), " dbname=", PQdb(conn_),
                        " user=", PQuser(conn_));
  PQsetNoticeProcessor(conn_, LogNotice, nullptr);
  return SetUpSession();
}

absl::Status PgConnection::SetUpSession() {
  for (const std::string& sql : options_.session_setup) {
    if (absl::Status st = Run(sql); !st.ok()) return st;
  }
  if (options_.on_connect) return options_.on_connect(*this);
  return absl::OkStatus();
}

absl::Status PgConnection::EnsureConnected() {
  if (conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK) {
    // A server that restarted or terminated this backend sent a FATAL message and closed the
    // socket. An idle connection has nothing to read, so a readable socket means exactly that:
    // reading it (the message, then the end of file) marks the connection bad without a round
    // trip, before a statement is sent into the void. libpq stops at the message, hence the loop.
    pollfd pfd{PQsocket(conn_), POLLIN, 0};
    for (int i = 0; i < 4 && poll(&pfd, 1, 0) == 1 && PQstatus(conn_) == CONNECTION_OK; ++i) {
      if (PQconsumeInput(conn_) == 0) break;
    }
    if (PQstatus(conn_) == CONNECTION_OK) return absl::OkStatus();
  }
  if (conn_ != nullptr && in_transaction_) {
    // Reopening here would run the rest of the transaction's statements one by one, outside it.
    // The caller rolls back (which reconnects) and reports the failure.
    in_transaction_ = false;
    return absl::UnavailableError(
        absl::StrCat("postgres ", where_, ": connection lost inside a transaction"));
  }
  if (conn_ != nullptr) {
    spdlog::warn("postgres: connection to {} lost, reconnecting", where_);
  }
  in_transaction_ = false;
  return Open();
}

absl::Status PgConnection::ErrorFrom(pg_result* r, std::string_view what, std::string_view sql) {
  const char* field = r == nullptr ? nullptr : PQresultErrorField(r, PG_DIAG_SQLSTATE);
  const std::string state = field == nullptr ? "" : field;  // r is cleared below
  std::string msg = OneLine(r != nullptr ? PQresultErrorMessage(r) : PQerrorMessage(conn_));
  if (msg.empty()) msg = OneLine(PQerrorMessage(conn_));
  absl::StatusCode code = !state.empty() ? StatusCodeForSqlState(state)
                          : PQstatus(conn_) == CONNECTION_BAD ? absl::StatusCode::kUnavailable
                                                              : absl::StatusCode::kInternal;
  if (r != nullptr) PQclear(r);
  std::string head(sql.substr(0, 60));
  absl::StrReplaceAll({{"\n", " "}}, &head);
  return absl::Status(code, absl::StrCat("postgres ", where_, ": ", std::string(what), " (", head,
                                         sql.size() > 60 ? "...)" : ")", ": ", msg,
                                         state.empty() ? "" : absl::StrCat(" [", state, "]")));
}

absl::Status PgConnection::Run(const std::string& sql) {
  if (absl::Status st = EnsureConnected(); !st.ok()) return st;
  pg_result* r = PQexec(conn_, sql.c_str());
  const ExecStatusType s = r == nullptr ? PGRES_FATAL_ERROR : PQresultStatus(r);
  if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
    in_transaction_ = PQtransactionStatus(conn_) == PQTRANS_INERROR;
    return ErrorFrom(r, "statement failed", sql);
  }
  PQclear(r);
  in_transaction_ = PQtransactionStatus(conn_) == PQTRANS_INTRANS;
  return absl::OkStatus();
}

absl::StatusOr<PgResult> PgConnection::Query(const std::string& sql, const PgParams& params) {
  if (absl::Status st = EnsureConnected(); !st.ok()) return st;
  auto it = prepared_.find(sql);
  if (it == prepared_.end()) {
    const std::string name = absl::StrCat("gpuspy_", prepared_.size() + 1);
    pg_result* r = PQprepare(conn_, name.c_str(), sql.c_str(), static_cast<int>(params.size()),
                             params.types_.data());
    if (r == nullptr || PQresultStatus(r) != PGRES_COMMAND_OK) {
      return ErrorFrom(r, "preparing failed", sql);
    }
    PQclear(r);
    it = prepared_.emplace(sql, name).first;
  }
  pg_result* r = PQexecPrepared(conn_, it->second.c_str(), static_cast<int>(params.size()),
                                params.values_.data(), params.lengths_.data(),
                                params.formats_.data(), /*resultFormat=*/1);
  const ExecStatusType s = r == nullptr ? PGRES_FATAL_ERROR : PQresultStatus(r);
  in_transaction_ = PQtransactionStatus(conn_) == PQTRANS_INTRANS ||
                    PQtransactionStatus(conn_) == PQTRANS_INERROR;
  if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) return ErrorFrom(r, "query failed", sql);
  return PgResult(r);
}

std::string PgQuoteIdentifier(std::string_view name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace gpuspy::collector
