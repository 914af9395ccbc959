// trainplan serve under abuse (docs/SERVER.md, "Limits"): bodies of any
// content type and size, samples past the row limit, requests past their time
// limit or beyond the slots, HTTP-level errors, stopping while requests
// compute. Every answer is JSON, in the API's terms, and the server keeps
// serving.
#include <gtest/gtest.h>
#include <fmt/format.h>

#include <algorithm>

#include <chrono>
#include <httplib.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <sys/stat.h>

#include "server/request_fields.h"
#include <vector>

#include "io/sample_csv.h"
#include "server/server_util.h"
#include "server/service.h"
#include "test_util.h"

namespace {

using nlohmann::json;
using trainplan::server::Limits;
using tpserver::many_rows_csv;
using tpserver::raw_exchange;
using tpserver::Running;

// Fast models: a fit of a few hundred rows takes milliseconds.
json quick_fit(const std::string& csv) {
  return {{"samples_csv", csv}, {"time_model", "isotonic-mi"}, {"metric_model", "isotonic-mi"}};
}

// A request that computes for tens of seconds unless it is stopped.
json slow_fit() { return {{"samples_csv", tpserver::spread_rows_csv(10000)}, {"model", "auto"}}; }

// Stops the server and joins the request threads on every way out of a test,
// a failed ASSERT included: a thread left joinable would abort the binary.
struct StopAndJoin {
  Running& s;
  std::vector<std::thread>& threads;
  ~StopAndJoin() {
    s.service.stop();
    for (auto& t : threads)
      if (t.joinable()) t.join();
  }
};

// One slot in each pool and a line of `queue`: the limits fill at once.
Limits one_slot(int queue) {
  Limits l;
  l.max_concurrent = 1;
  l.max_queue = queue;
  return l;
}

bool healthy(Running& s) {
  int st = 0;
  return s.get("/health", &st)["status"] == "ok" && st == 200;
}

// curl -d sends a form content type, which httplib caps at 8,192 bytes with
// an empty 413; the server reads the body itself, whatever the type says.
TEST(ServerLimits, JsonIsReadWhateverTheContentType) {
  Running s;
  const std::string body = quick_fit(many_rows_csv(400)).dump();
  ASSERT_GT(body.size(), 8192u);
  int st = 0;
  json f = s.post("/fit", body, &st, "application/x-www-form-urlencoded");
  EXPECT_EQ(st, 200) << f.dump();
  EXPECT_EQ(f["n_samples"], 400);
  f = s.post("/fit", body, &st, "text/plain");
  EXPECT_EQ(st, 200) << f.dump();
  // No content type at all.
  auto a = raw_exchange(s.port, "POST /fit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + std::to_string(body.size()) +
                                    "\r\n\r\n" + body);
  ASSERT_EQ(a.status, 200) << a.head << a.body;
  EXPECT_EQ(json::parse(a.body)["n_samples"], 400);
}

// A Content-Length that is no number of bytes (negative, past 64 bits, text)
// is a 400 at once, not a 413 after the server waited for the body.
TEST(ServerLimits, AContentLengthThatIsNoNumberIs400AtOnce) {
  Running s;
  for (const char* length : {"-5", "99999999999999999999999", "ten"}) {
    const auto t0 = std::chrono::steady_clock::now();
    auto a = raw_exchange(s.port, std::string("POST /fit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ") + length + "\r\n\r\n{}", 10);
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(a.status, 400) << length << "\n" << a.head << a.body;
    EXPECT_LT(waited, 2.0) << length;
    if (a.status == 400) EXPECT_NE(json::parse(a.body)["error"].get<std::string>().find("Content-Length"), std::string::npos);
  }
  int st = 0;
  s.get("/health", &st);
  EXPECT_EQ(st, 200);
}

// Two Content-Length headers leave where the request ends to whichever a proxy believed: refused,
// and the connection closed, so that nothing after it is read as another request.
TEST(ServerLimits, TwoContentLengthsAreRefusedAndTheConnectionClosed) {
  Running s;
  auto a = raw_exchange(s.port, "POST /fit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nContent-Length: 10\r\n\r\n{}", 10);
  EXPECT_EQ(a.status, 400) << a.head << a.body;
  EXPECT_NE(a.head.find("Connection: close"), std::string::npos) << a.head;
  int st = 0;
  s.get("/health", &st);
  EXPECT_EQ(st, 200);
}

// A header this server would not see (a space before its colon, a line
// folded onto the one before) while a proxy might, two Hosts, a compressed
// body (httplib inflates it before any limit), a query string beside the
// body and a NUL byte in it are refused, and the connection closed: no body
// is read as a request of its own, and no field is passed over.
TEST(ServerLimits, HeadersBodiesAndQueriesThatHideWhatTheyMeanAreRefused) {
  Running s;
  const std::string inner = "GET /fits HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  for (const std::string& length : {std::string("Content-Length : "), std::string("X: y\r\n Content-Length: ")}) {
    auto a = raw_exchange(s.port, "POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\n" + length +
                                      std::to_string(inner.size()) + "\r\n\r\n" + inner, 10);
    EXPECT_EQ(a.status, 400) << length << "\n" << a.head << a.body;
    EXPECT_NE(a.head.find("Connection: close"), std::string::npos) << a.head;
    EXPECT_EQ(a.body.find("HTTP/1.1"), std::string::npos) << "the body was answered as a request: " << a.body;
    EXPECT_NE(a.body.find("white space"), std::string::npos) << a.body;
  }
  auto two_hosts = raw_exchange(s.port, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n", 10);
  EXPECT_EQ(two_hosts.status, 400) << two_hosts.head << two_hosts.body;
  EXPECT_NE(two_hosts.body.find("more than one Host"), std::string::npos) << two_hosts.body;
  auto two_origins = raw_exchange(s.port, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://127.0.0.1\r\n"
                                          "Origin: http://evil.example\r\n\r\n", 10);
  EXPECT_EQ(two_origins.status, 400) << two_origins.head << two_origins.body;
  // Content-Encoding: identity (and an empty one) is no compression: read as any body.
  for (const char* coding : {"identity", ""}) {
    auto plain = raw_exchange(s.port, std::string("POST /fit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Encoding: ") + coding +
                                          "\r\nContent-Length: 2\r\n\r\n{}", 10);
    EXPECT_EQ(plain.status, 400) << coding << "\n" << plain.head << plain.body;  // no samples: the fit's own refusal
    EXPECT_NE(plain.body.find("samples"), std::string::npos) << plain.body;
  }
  // A path or method the server does not route: its 404 or 405 first, whatever else is wrong.
  auto nowhere = raw_exchange(s.port, "POST /nowhere?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}", 10);
  EXPECT_EQ(nowhere.status, 404) << nowhere.head << nowhere.body;
  auto put = raw_exchange(s.port, "PUT /fit?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Encoding: gzip\r\n"
                                  "Content-Length: 2\r\n\r\n{}", 10);
  EXPECT_EQ(put.status, 405) << put.head << put.body;
  // Not gzip at all: refused for its header alone, before anything is inflated.
  auto gz = raw_exchange(s.port, "POST /fit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Encoding: gzip\r\nContent-Length: 2\r\n\r\n{}", 10);
  EXPECT_EQ(gz.status, 415) << gz.head << gz.body;
  EXPECT_NE(gz.body.find("uncompressed"), std::string::npos) << gz.body;
  int st = 0;
  json q = s.post("/fit?model=auto", quick_fit(many_rows_csv(20)).dump(), &st);
  EXPECT_EQ(st, 400) << q.dump();
  EXPECT_NE(q["error"].get<std::string>().find("query string"), std::string::npos) << q.dump();
  json nul = s.post("/fit", quick_fit(many_rows_csv(20)).dump() + std::string(1, '\0') + "{\"garbage", &st);
  EXPECT_EQ(st, 400) << nul.dump();
  EXPECT_NE(nul["error"].get<std::string>().find("NUL byte"), std::string::npos) << nul.dump();
  EXPECT_TRUE(healthy(s));
}

// Content-Length beside Transfer-Encoding is refused as two lengths are; a
// coding other than chunked alone is 501 at once, not a wait for bytes.
TEST(ServerLimits, TransferEncodingsOtherThanChunkedAloneAreRefused) {
  Running s;
  // A chunked POST /fit with `headers` beside Transfer-Encoding, and `body` as its one chunk.
  auto post = [&](const std::string& headers, const std::string& body) {
    return raw_exchange(s.port,
                        fmt::format("POST /fit HTTP/1.1\r\nHost: 127.0.0.1\r\n{}\r\n\r\n{:x}\r\n{}\r\n0\r\n\r\n", headers,
                                    body.size(), body),
                        10);
  };
  auto both = post("Content-Length: 2\r\nTransfer-Encoding: chunked", "{}");
  EXPECT_EQ(both.status, 400) << both.head << both.body;
  EXPECT_NE(both.head.find("Connection: close"), std::string::npos) << both.head;
  auto gzip = post("Transfer-Encoding: gzip, chunked", "{}");
  EXPECT_EQ(gzip.status, 501) << gzip.head << gzip.body;
  EXPECT_NE(gzip.body.find("chunked alone"), std::string::npos) << gzip.body;
  // Codings are case-insensitive: "Chunked" is read as chunked (its body
  // answered), not left in the connection as the next request.
  auto chunked = post("Transfer-Encoding: Chunked", R"({"samples_csv": 5})");
  EXPECT_EQ(chunked.status, 400) << chunked.head << chunked.body;
  EXPECT_NE(chunked.body.find("must be a string"), std::string::npos) << chunked.body;
}

// A POST without a body (no length, no chunks) is an empty body at once, not
// a wait for the connection to close that ends in an empty 400.
TEST(ServerLimits, PostWithoutBodyIsAnsweredInJson) {
  Running s;
  for (const char* head : {"POST /fit HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", "POST /fit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n"}) {
    auto a = raw_exchange(s.port, head);
    ASSERT_EQ(a.status, 400) << head << a.head;
    json e = json::parse(a.body);
    EXPECT_EQ(e["field"], "samples_csv") << e.dump();
    EXPECT_TRUE(e["error"].is_string());
  }
}

TEST(ServerLimits, BodyOverTheLimitIs413InJson) {
  Limits l;
  l.max_body_bytes = 4096;
  Running s(l);
  const std::string body = quick_fit(many_rows_csv(400)).dump();
  ASSERT_GT(body.size(), l.max_body_bytes);
  int st = 0;
  json e = s.post("/fit", body, &st);
  EXPECT_EQ(st, 413);
  EXPECT_NE(e["error"].get<std::string>().find("4096"), std::string::npos) << e.dump();
  // A client that asks first is refused before it sends the body.
  auto a = raw_exchange(s.port,
                        "POST /fit HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 100000000\r\n\r\n");
  EXPECT_EQ(a.status, 413) << a.head;
  EXPECT_TRUE(json::parse(a.body)["error"].is_string());
  // Chunks, with no length announced: counted as they come.
  std::string chunked = "POST /fit HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 4; ++i) chunked += "800\r\n" + std::string(2048, ' ') + "\r\n";
  a = raw_exchange(s.port, chunked + "0\r\n\r\n");
  EXPECT_EQ(a.status, 413) << a.head;
  EXPECT_TRUE(json::parse(a.body)["error"].is_string());
  // Under the limit it is read.
  e = s.post("/fit", quick_fit(many_rows_csv(40)).dump(), &st);
  EXPECT_EQ(st, 200) << e.dump();
  EXPECT_TRUE(healthy(s));
}

// Bodies held at once (read or being parsed) are bounded by 4 x the body
// limit: past it, 503 with Retry-After, and the server keeps serving.
TEST(ServerLimits, BodiesHeldAtOnceAreBounded) {
  Limits l;
  l.max_body_bytes = 4096;
  Running s(l);
  const std::string body = quick_fit(many_rows_csv(20)).dump();
  ASSERT_GT(body.size(), 400u);
  ASSERT_LE(body.size(), 4096u);
  auto post = [&] {
    return raw_exchange(s.port, "POST /fit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + std::to_string(body.size()) +
                                    "\r\n\r\n" + body);
  };
  // Requests that announce 4,000 bytes and send none hold no room: a body is
  // held as it arrives, not as announced (four slow clients announcing the
  // most kept every other client out).
  std::vector<int> held;
  // Each from a client of its own (127.0.0.2, ...): a client's bodies hold at most --max-body-bytes.
  auto announce = [&](const std::string& sent) {
    const std::string from = "127.0.0." + std::to_string(2 + held.size() % 4);
    int fd = tpserver::connect_local(s.port, from.c_str());
    const std::string head = "POST /fit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4000\r\n\r\n" + sent;
    if (fd >= 0) ::send(fd, head.data(), head.size(), MSG_NOSIGNAL);
    held.push_back(fd);
    return fd >= 0;
  };
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(announce(""));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(s.http.body_bytes_held(), 0u);
  EXPECT_EQ(post().status, 200);
  for (int fd : held) ::close(fd);
  held.clear();
  tpserver::wait_until([&] { return s.http.body_bytes_held() == 0; }, 6);
  // Four that sent 3,990 bytes of theirs hold them: the room left is
  // 16,384 - 15,960 bytes, and a body larger than that is refused.
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(announce(std::string(3990, ' ')));
  tpserver::wait_until([&] { return s.http.body_bytes_held() >= 15960; }, 4);
  ASSERT_EQ(s.http.body_bytes_held(), 15960u) << "the four bodies were not all taken in within 4 s";
  auto a = post();
  ASSERT_EQ(a.status, 503) << a.head << "\n" << a.body;
  EXPECT_NE(a.head.find("Retry-After: 1"), std::string::npos) << a.head;
  EXPECT_NE(a.body.find("\"error\": \"busy: the request bodies"), std::string::npos) << a.body;
  for (int fd : held) ::close(fd);
  // Room again once they are gone.
  tpserver::wait_until([&] { return s.http.body_bytes_held() == 0; }, 2);
  EXPECT_EQ(s.http.body_bytes_held(), 0u);
  int st = 0;
  json f = s.post("/fit", body, &st);
  EXPECT_EQ(st, 200) << f.dump();
}

// One client's bodies hold at most --max-body-bytes between them: its
// stalled bodies cannot take the room from the others (four of 8 MB, sent
// but for a few bytes, held every other client's POST off for a minute).
TEST(ServerLimits, OneClientsStalledBodiesLeaveRoomForOthers) {
  Limits l;
  l.max_body_bytes = 4096;
  Running s(l);
  const std::string body = quick_fit(many_rows_csv(20)).dump();
  ASSERT_GT(body.size(), 400u);
  ASSERT_LE(body.size(), 4096u);
  int first = tpserver::connect_local(s.port, "127.0.0.2");
  ASSERT_GE(first, 0);
  const std::string head = "POST /fit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4000\r\n\r\n" + std::string(3990, ' ');
  ::send(first, head.data(), head.size(), MSG_NOSIGNAL);
  ASSERT_TRUE(tpserver::wait_until([&] { return s.http.body_bytes_held() == 3990; }, 4));
  const std::string again = "POST /fit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + std::to_string(body.size()) +
                            "\r\n\r\n" + body;
  auto same = raw_exchange(s.port, again, 10, "127.0.0.2");
  EXPECT_EQ(same.status, 503) << same.head << same.body;
  EXPECT_NE(same.body.find("this client's request bodies"), std::string::npos) << same.body;
  auto other = raw_exchange(s.port, again, 10, "127.0.0.3");
  EXPECT_EQ(other.status, 200) << other.head << other.body;
  ::close(first);
}

// A line of a chunked body's framing has a bound (httplib read a chunk-size
// line of 300 MB whole, a byte at a time); a chunked request ends its
// connection, so that bytes after a chunk are never read as a request.
TEST(ServerLimits, AChunkedBodysFramingIsBoundedAndEndsItsConnection) {
  Running s;
  auto huge = raw_exchange(s.port, "POST /fit HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n1" +
                                       std::string(20000, '0'),
                           10);
  EXPECT_EQ(huge.status, 400) << huge.head << huge.body;
  EXPECT_NE(huge.body.find("chunked body's framing"), std::string::npos) << huge.body;
  // A chunk not followed by its CRLF, then what looks like a request: one answer, and the connection closed.
  {
    const int fd = tpserver::connect_local(s.port);
    ASSERT_GE(fd, 0);
    const std::string both = "POST /fit HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}JUNK\r\n"
                             "GET /fits HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    ::send(fd, both.data(), both.size(), MSG_NOSIGNAL);
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string in;
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) in.append(buf, size_t(n));
    ::close(fd);
    EXPECT_EQ(in.rfind("HTTP/1.1 "), 0u) << in;  // one answer, and the connection closed after it
    EXPECT_NE(in.find("Connection: close"), std::string::npos) << in;
  }
  // A second Transfer-Encoding header adds to the first: chunked, then identity, is not chunked alone.
  auto two = raw_exchange(s.port,
                          "POST /fit HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: "
                          "identity\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
                          10);
  EXPECT_EQ(two.status, 501) << two.head << two.body;
  EXPECT_NE(two.body.find("'chunked,identity'"), std::string::npos) << two.body;  // both headers, as read
  EXPECT_TRUE(healthy(s));
}

TEST(ServerLimits, SamplesOverTheRowLimitAre422) {
  Limits l;
  l.max_rows = 100;
  l.max_body_bytes = 20000;
  Running s(tpserver::with_paths(l));
  int st = 0;
  json e = s.post("/fit", quick_fit(many_rows_csv(101)), &st);
  EXPECT_EQ(st, 422) << e.dump();
  EXPECT_EQ(e["field"], "samples_csv");
  e = s.post("/predict", json{{"samples_csv", many_rows_csv(101)}, {"batch", 32}, {"workers", 2}}, &st);
  EXPECT_EQ(st, 422) << e.dump();
  e = s.post("/fit", quick_fit(many_rows_csv(100)), &st);
  EXPECT_EQ(st, 200) << e.dump();
  EXPECT_EQ(e["n_samples"], 100);
  // Lines ended by '\r' alone (the CSV reader splits them there) count as rows too; "\r\n" as one.
  std::string cr = many_rows_csv(101), crlf;
  for (char c : cr) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  std::replace(cr.begin(), cr.end(), '\n', '\r');
  e = s.post("/fit", quick_fit(cr), &st);
  EXPECT_EQ(st, 422) << e.dump();
  e = s.post("/fit", quick_fit(crlf), &st);
  EXPECT_EQ(st, 422) << e.dump();
  crlf = crlf.substr(0, crlf.rfind("\r\n", crlf.size() - 3) + 2);  // the last row dropped: 100
  e = s.post("/fit", quick_fit(crlf), &st);
  EXPECT_EQ(st, 200) << e.dump();
  EXPECT_EQ(e["n_samples"], 100);

  // A file on the server: the same row limit, and the body limit on its bytes.
  auto dir = tptest::temp_dir("server_limits");
  const std::string over = tptest::write_file(dir / "over.csv", many_rows_csv(101));
  e = s.post("/fit", json{{"samples_path", over}, {"model", "isotonic-mi"}}, &st);
  EXPECT_EQ(st, 422) << e.dump();
  EXPECT_EQ(e["field"], "samples_path");
  const std::string wide = tptest::write_file(dir / "wide.csv", many_rows_csv(50) + "# " + std::string(30000, 'x') + "\n");
  e = s.post("/fit", json{{"samples_path", wide}, {"model", "isotonic-mi"}}, &st);
  EXPECT_EQ(st, 413) << e.dump();
  EXPECT_EQ(e["field"], "samples_path");
  // Only regular files: a pipe would block the request's thread past any
  // time limit until someone wrote to it; a directory is no sample set.
  const std::string fifo = (dir / "pipe").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, dir.string()}) {
    e = s.post("/fit", json{{"samples_path", path}, {"model", "isotonic-mi"}}, &st);
    EXPECT_EQ(st, 400) << path << " " << e.dump();
    EXPECT_EQ(e["field"], "samples_path");
    EXPECT_NE(e["error"].get<std::string>().find("not a regular file"), std::string::npos) << e.dump();
  }
  e = s.post("/fit", json{{"samples_path", ""}, {"model", "isotonic-mi"}}, &st);
  EXPECT_EQ(st, 400) << e.dump();
  EXPECT_EQ(e["field"], "samples_path");
  // A header quoted back in an error is cut short, not returned whole.
  const std::string header_only = tptest::write_file(dir / "h.csv", std::string(5000, 'y') + "\n1\n");
  e = s.post("/fit", json{{"samples_path", header_only}, {"model", "isotonic-mi"}}, &st);
  EXPECT_EQ(st, 400) << e.dump().substr(0, 300);
  EXPECT_LT(e["error"].get<std::string>().size(), 1000u);
}

// A request past its time limit is abandoned: 503, and no id is kept.
TEST(ServerLimits, RequestPastItsTimeLimitIs503AndKeepsNothing) {
  Limits l;
  l.request_timeout_s = 0.3;
  Running s(l);
  int st = 0;
  json e = s.post("/fit", slow_fit(), &st);
  EXPECT_EQ(st, 503) << e.dump();
  EXPECT_NE(e["error"].get<std::string>().find("longer than 0.3 s"), std::string::npos) << e.dump();
  EXPECT_TRUE(s.get("/fits", &st)["fits"].empty());
  EXPECT_TRUE(healthy(s));
}

TEST(ServerLimits, HealthAnswersWhileHeavyRequestsCompute) {
  Limits l;
  l.max_concurrent = 2;
  Running s(l);
  std::vector<int> status(2);
  std::vector<json> out(2);
  std::vector<std::thread> ts;
  StopAndJoin finally{s, ts};
  for (int i = 0; i < 2; ++i) ts.emplace_back([&, i] { out[i] = s.post("/fit", slow_fit(), &status[i]); });
  ASSERT_TRUE(s.wait_in_flight(2));
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(healthy(s));
  EXPECT_EQ(s.service.in_flight(), 2);  // answered beside them, not after them
  s.service.stop();
  for (auto& t : ts) t.join();
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(status[i], 503) << out[i].dump();
    EXPECT_EQ(out[i]["error"], "the server is stopping");
  }
  EXPECT_TRUE(healthy(s));  // GETs still answer
}

TEST(ServerLimits, BeyondTheSlotsAndTheLineIs503WithRetryAfter) {
  Running s(one_slot(1));
  int fitted = 0;
  const json id = s.post("/fit", quick_fit(many_rows_csv(40)), &fitted)["id"];
  ASSERT_EQ(fitted, 200);
  std::vector<int> status(2);
  std::vector<std::thread> ts;
  StopAndJoin finally{s, ts};
  ts.emplace_back([&] { s.post("/fit", slow_fit(), &status[0]); });
  ASSERT_TRUE(s.wait_in_flight(1));
  ts.emplace_back([&] { s.post("/fit", slow_fit(), &status[1]); });  // waits in line
  // In line, not only in flight: a request reads and counts its samples
  // before it asks for a slot.
  ASSERT_TRUE(s.wait_waiting(1));
  httplib::Client c("127.0.0.1", s.port);
  auto r = c.Post("/predict", json{{"samples_csv", many_rows_csv(40)}, {"batch", 32}, {"workers", 2}}.dump(),
                  "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->get_header_value("Retry-After"), "1");
  EXPECT_NE(json::parse(r->body)["error"].get<std::string>().find("busy"), std::string::npos) << r->body;
  // A request on a fitted id has slots of its own: it does not wait behind fits.
  auto by_id = c.Post("/predict", json{{"id", id}, {"batch", 32}, {"workers", 2}}.dump(), "application/json");
  ASSERT_TRUE(by_id);
  EXPECT_EQ(by_id->status, 200) << by_id->body;
  EXPECT_TRUE(healthy(s));
  s.service.stop();
  for (auto& t : ts) t.join();
  EXPECT_EQ(status[0], 503);
  EXPECT_EQ(status[1], 503);
}

// A client holding its share of a pool's places (a quarter of the slots and
// the line) while another client asks has its next request refused at once:
// one client's burst of fits cannot keep another's out of the line.
TEST(ServerLimits, OneClientsBurstLeavesPlacesForAnother) {
  Running s(one_slot(4));  // a client's share: (1 + 4) / 4 = 1 place while another asks
  const std::string fit = slow_fit().dump();
  const std::string post = "POST /fit HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: " +
                           std::to_string(fit.size()) + "\r\n\r\n" + fit;
  std::vector<tpserver::RawAnswer> answers(2);
  std::vector<std::thread> ts;
  StopAndJoin finally{s, ts};
  ts.emplace_back([&] { answers[0] = raw_exchange(s.port, post, 60, "127.0.0.2"); });
  ASSERT_TRUE(s.wait_in_flight(1));
  ts.emplace_back([&] { answers[1] = raw_exchange(s.port, post, 60, "127.0.0.3"); });  // waits in line
  ASSERT_TRUE(s.wait_waiting(1));
  auto burst = raw_exchange(s.port, post, 60, "127.0.0.2");
  EXPECT_EQ(burst.status, 503) << burst.head << burst.body;
  EXPECT_NE(burst.body.find("this client holds 1 of the places"), std::string::npos) << burst.body;
  EXPECT_NE(burst.head.find("Retry-After: 1"), std::string::npos) << burst.head;
}

// No line (--max-queue 0) stays none, whoever fills the slots.
TEST(ServerLimits, NoLineStaysNoneWhenAnotherClientFillsTheSlots) {
  Limits l = one_slot(0);
  l.max_concurrent = 2;
  Running s(l);
  const std::string fit = slow_fit().dump();
  const std::string post = "POST /fit HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: " +
                           std::to_string(fit.size()) + "\r\n\r\n" + fit;
  std::vector<std::thread> ts;
  StopAndJoin finally{s, ts};
  for (int i = 0; i < 2; ++i) ts.emplace_back([&] { raw_exchange(s.port, post, 60, "127.0.0.2"); });
  ASSERT_TRUE(s.wait_in_flight(2));
  int st = 0;
  ASSERT_TRUE(tpserver::wait_until([&] { return s.get("/health", &st)["computing"] == 2; }, 10));
  auto other = raw_exchange(s.port, post, 60, "127.0.0.3");
  EXPECT_EQ(other.status, 503) << other.head << other.body;
  EXPECT_NE(other.body.find("--max-queue"), std::string::npos) << other.body;
}

// Requests on fitted ids are bounded as those with samples are: past their
// slots and line, 503, whatever their number; the samples' pool still answers.
TEST(ServerLimits, RequestsOnFittedIdsHaveSlotsAndALineOfTheirOwn) {
  Running s(one_slot(1));
  int st = 0;
  // Many rows fitted fast; choosing a model for them ("auto") takes long.
  const json slow_id = s.post("/fit", quick_fit(tpserver::spread_rows_csv(10000)), &st)["id"];
  ASSERT_EQ(st, 200);
  const json other_id = s.post("/fit", quick_fit(many_rows_csv(40)), &st)["id"];
  ASSERT_EQ(st, 200);
  std::vector<int> status(2);
  std::vector<std::thread> ts;
  StopAndJoin finally{s, ts};
  ts.emplace_back([&] {
    s.post("/predict", json{{"id", slow_id}, {"model", "auto"}, {"batch", 32}, {"workers", 2}}, &status[0]);
  });
  auto by_id = [&](const char* what) { return s.get("/health", &st)["by_id"][what].get<int>(); };
  bool computing = false;
  for (int i = 0; i < 500 && !computing; ++i) {
    computing = by_id("computing") == 1;
    if (!computing) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(computing);
  // A second request on the busy id waits for the id, holding no slot but a
  // place in the ids' line (--max-queue 1 here).
  ts.emplace_back([&] { s.post("/predict", json{{"id", slow_id}, {"batch", 32}, {"workers", 2}}, &status[1]); });
  ASSERT_TRUE(s.wait_in_flight(2));
  bool waiting = false;
  for (int i = 0; i < 500 && !waiting; ++i) {
    waiting = by_id("waiting") == 1;
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(waiting);
  EXPECT_EQ(by_id("computing"), 1);
  // A third on the busy id finds the line full: 503 at once, not a thread held until its time limit.
  json third = s.post("/predict", json{{"id", slow_id}, {"batch", 32}, {"workers", 2}}, &st);
  EXPECT_EQ(st, 503) << third.dump();
  EXPECT_NE(third["error"].get<std::string>().find("waiting (for their id"), std::string::npos) << third.dump();
  // Another id finds the ids' one slot taken and no room in line: 503.
  json busy = s.post("/predict", json{{"id", other_id}, {"batch", 32}, {"workers", 2}}, &st);
  EXPECT_EQ(st, 503) << busy.dump();
  EXPECT_NE(busy["error"].get<std::string>().find("on fitted ids"), std::string::npos) << busy.dump();
  EXPECT_EQ(s.get("/health", &st)["computing"], 1);
  // The samples' pool is apart: a fit still runs.
  json fresh = s.post("/fit", quick_fit(many_rows_csv(40)), &st);
  EXPECT_EQ(st, 200) << fresh.dump();
  s.service.stop();
  for (auto& t : ts) t.join();
  EXPECT_EQ(status[0], 503);
  // The second got the id as the first gave it up: answered, or stopped on its way.
  EXPECT_TRUE(status[1] == 200 || status[1] == 503) << status[1];
}

// Errors name the request's fields, never the CLI's options.
TEST(ServerLimits, ErrorsNameRequestFields) {
  Running s;
  int st = 0;
  json f = s.post("/fit", json{{"samples_csv", tpserver::fixture_csv()}, {"time_model", "isotonic-mi"},
                               {"metric_model", "global-batch"}},
                  &st);
  ASSERT_EQ(st, 200) << f.dump();
  const json plan = {{"id", f["id"]}, {"target", 0.8}, {"deadline", 3000}, {"max_workers", 8}};
  struct Case {
    const char* path;
    json patch;
    const char* field;
  };
  const std::vector<Case> cases = {
      {"/plan", {{"deadline", -1}}, "deadline"},
      {"/plan", {{"confidence", 1.5}}, "confidence"},
      {"/plan", {{"early_stop", true}, {"method", "lb-bsp"}}, "early_stop"},
      {"/plan", {{"early_stop", true}, {"frontier", true}}, "frontier"},
      {"/plan", {{"max_workers", -2}}, "max_workers"},
      {"/plan", {{"max_epochs", -1}}, "max_epochs"},
      {"/plan", {{"max_epochs", 2000000}}, "max_epochs"},
      {"/plan", {{"tabu_tenure", -3}}, "tabu_tenure"},
      {"/plan", {{"manual_tries", -1}}, "manual_tries"},
      {"/plan", {{"manual_tries", 2000000000}}, "manual_tries"},  // a core for the request's whole limit
      {"/plan", {{"tabu_iterations", 2000000000}}, "tabu_iterations"},
      {"/plan", {{"gpus_per_node", -3}}, "gpus_per_node"},
      {"/plan", {{"gpus_per_node", -1}}, "gpus_per_node"},  // the planner's "not given"
      // Fields this plan does not read, refused as the CLI refuses their options.
      {"/plan", {{"train_cmd", "python3 train.py"}}, "train_cmd"},
      {"/plan", {{"job_name", "a"}, {"emit", "torchrun"}}, "job_name"},
      {"/plan", {{"conformal", true}}, "conformal"},
      {"/plan", {{"bounds", "one-sided"}}, "bounds"},
      {"/plan", {{"early_stop_budget", "target"}}, "early_stop_budget"},
      {"/plan", {{"tabu_tenure", 3}, {"method", "lb-bsp"}}, "tabu_tenure"},
      {"/plan", {{"batches", json::array()}}, "batches"},
      {"/predict", {{"batch", 32}, {"workers", 2}, {"max_epochs", 500}}, "max_epochs"},
      {"/curves", {{"evaluate", {"isotonic-mi", "global-batch", "isotonic-mi"}}}, "evaluate"},
      {"/predict", {{"batch", 32}, {"workers", 2}, {"gpus_per_node", -1}}, "gpus_per_node"},
      {"/predict", {{"batch", 32}, {"workers", 2}, {"target", 0.9}, {"max_epochs", 1000000000}}, "max_epochs"},
      {"/predict", {{"batch", 32}, {"workers", 0}}, "workers"},
      {"/predict", {{"batch", 32}, {"workers", 2}, {"folds", 1}}, "folds"},
      {"/predict", {{"batch", 32}, {"workers", 2}, {"confidence", 0}}, "confidence"},
  };
  // Model names, checked where the field is known.
  for (const auto& [patch, field] : {std::pair{json{{"model", ""}}, "model"}, {json{{"time_model", "global-batch"}}, "time_model"},
                                     {json{{"metric_model", "isotonic-mi-time-only-nonexistent"}}, "metric_model"}}) {
    json req = {{"samples_csv", tpserver::fixture_csv()}};
    req.update(patch);
    json e = s.post("/fit", req, &st);
    EXPECT_EQ(st, 400) << req.dump() << " -> " << e.dump();
    EXPECT_EQ(e["field"], field) << e.dump();
  }
  for (const auto& c : cases) {
    json req = std::string(c.path) == "/plan" ? plan : json{{"id", f["id"]}};
    req.update(c.patch);
    json e = s.post(c.path, req, &st);
    EXPECT_EQ(st, 400) << c.path << " " << req.dump() << " -> " << e.dump();
    EXPECT_EQ(e["field"], c.field) << e.dump();
    const std::string msg = e["error"].get<std::string>();
    EXPECT_EQ(msg.find("--"), std::string::npos) << msg;
    EXPECT_EQ(msg.rfind(c.field, 0), 0u) << msg;  // "deadline must be > 0 seconds"
  }
  // A field at its default asks for nothing, and is not refused where the plan does not read it.
  json defaults = plan;
  defaults.update({{"conformal", false}, {"no_gpus", false}, {"bounds", "two-sided"}, {"early_stop_budget", "deadline"}});
  json d = s.post("/plan", defaults, &st);
  EXPECT_EQ(st, 200) << d.dump();
  json bad = plan;
  bad["deadline"] = -1;
  EXPECT_EQ(s.post("/plan", bad, &st)["error"], "deadline must be > 0 seconds");
  // Past an integer's range is out of range, not wrapped to a negative "not given".
  for (const json& v : {json(18446744073709551615ULL), json(1e23)}) {
    bad = plan;
    bad["gpus_per_node"] = v;
    json e = s.post("/plan", bad, &st);
    EXPECT_EQ(st, 400) << v << " -> " << e.dump();
    EXPECT_EQ(e["error"], "field 'gpus_per_node' is out of range") << e.dump();
  }
  // An unknown field is quoted back in part, not whole.
  bad = plan;
  bad[std::string(100000, 'k')] = 1;
  json e = s.post("/plan", bad, &st);
  EXPECT_EQ(st, 400);
  EXPECT_LT(e.dump().size(), 2000u) << e.dump().size();
}

TEST(ServerLimits, SearchSpaceOverTheLimitIs422) {
  Limits l;
  l.max_plan_cells = 100;  // the fixture has 4 batches: 25 worker counts
  Running s(l);
  int st = 0;
  json f = s.post("/fit", json{{"samples_csv", tpserver::fixture_csv()}, {"time_model", "isotonic-mi"},
                               {"metric_model", "global-batch"}},
                  &st);
  ASSERT_EQ(st, 200) << f.dump();
  json e = s.post("/plan", json{{"id", f["id"]}, {"target", 0.8}, {"deadline", 3000}, {"max_workers", 26}}, &st);
  EXPECT_EQ(st, 422) << e.dump();
  EXPECT_EQ(e["field"], "max_workers");
  e = s.post("/plan", json{{"id", f["id"]}, {"target", 0.8}, {"deadline", 3000}, {"max_workers", 25}}, &st);
  EXPECT_EQ(st, 200) << e.dump();
}

// Past --max-fits a /fit lets go of the id used least recently: a client
// that fits many sample sets cannot lock the others out (a 503 for every
// later /fit until the process ends), and an id in use stays.
TEST(ServerLimits, FitsPastTheLimitLetGoOfTheLeastRecentlyUsed) {
  Limits l;
  l.max_fits = 2;
  Running s(l);
  int st = 0;
  const std::string a = s.post("/fit", quick_fit(many_rows_csv(40)), &st)["id"];
  ASSERT_EQ(st, 200);
  const std::string b = s.post("/fit", quick_fit(many_rows_csv(40)), &st)["id"];
  ASSERT_EQ(st, 200);
  s.post("/predict", json{{"id", a}, {"batch", 32}, {"workers", 2}}, &st);
  ASSERT_EQ(st, 200);
  const std::string c = s.post("/fit", quick_fit(many_rows_csv(40)), &st)["id"];
  ASSERT_EQ(st, 200);
  std::set<std::string> held;
  const json fits = s.get("/fits", &st);
  for (const auto& f : fits["fits"]) held.insert(f["id"].get<std::string>());
  EXPECT_EQ(held, (std::set<std::string>{a, c}));
  json e = s.post("/predict", json{{"id", b}, {"batch", 32}, {"workers", 2}}, &st);
  EXPECT_EQ(st, 404) << e.dump();
  EXPECT_NE(e["error"].get<std::string>().find("let go"), std::string::npos) << e.dump();
  e = s.post("/predict", json{{"id", "fit-999"}, {"batch", 32}, {"workers", 2}}, &st);
  EXPECT_EQ(st, 404);
  EXPECT_NE(e["error"].get<std::string>().find("unknown id"), std::string::npos) << e.dump();
  s.post("/predict", json{{"id", a}, {"batch", 32}, {"workers", 2}}, &st);
  EXPECT_EQ(st, 200);
}

// The id let go is the least recently used of those no request holds: an id
// a request is using outlasts idle ones, even older.
TEST(ServerLimits, AnIdInUseOutlastsIdleOnes) {
  Limits l;
  l.max_fits = 2;
  trainplan::server::Service svc("isotonic-mi", {}, l);
  auto fit = [&](int rows) {
    return svc.fit(trainplan::io::parse_samples_csv(many_rows_csv(rows), "s"), "s", "isotonic-mi")["id"].get<std::string>();
  };
  const std::string busy = fit(400), idle = fit(40);
  // A long request on `busy` (every model cross-validated), then one on
  // `idle`: `busy` is now the least recently used, and in use.
  std::atomic<bool> done{false};
  std::thread slow([&] {
    svc.handle("POST", "/curves", json{{"id", busy}, {"evaluate", "all"}}.dump());
    done = true;
  });
  for (int i = 0; i < 5000 && !done && svc.handle("GET", "/health", "").body.value("computing", 0) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_EQ(svc.handle("POST", "/predict", json{{"id", idle}, {"batch", 32}, {"workers", 2}}.dump()).status, 200);
  const std::string fresh = fit(40);
  const bool held = !done;
  slow.join();
  if (!held) GTEST_SKIP() << "the /curves request ended before the /fit: nothing in use to keep";
  const json fits = svc.handle("GET", "/fits", "").body;
  std::set<std::string> ids;
  for (const auto& f : fits["fits"]) ids.insert(f["id"].get<std::string>());
  EXPECT_EQ(ids, (std::set<std::string>{busy, fresh})) << fits.dump();
}

// An id kept (the samples `serve --samples` loads) is never let go; with
// every id held kept, a /fit past the limit is a 503.
TEST(ServerLimits, KeptFitsStay) {
  Limits l;
  l.max_fits = 1;
  trainplan::server::Service svc("isotonic-mi", {}, l);
  const std::string kept = svc.fit(trainplan::io::parse_samples_csv(many_rows_csv(40), "s"), "s", "isotonic-mi")["id"];
  svc.keep(kept);
  auto r = svc.handle("POST", "/fit", quick_fit(many_rows_csv(40)).dump());
  EXPECT_EQ(r.status, 503) << r.body.dump();
  EXPECT_NE(r.body["error"].get<std::string>().find("every one kept"), std::string::npos) << r.body.dump();
  // Refused before its samples are read and fitted: samples that would not
  // even parse get the 503, not a 400.
  r = svc.handle("POST", "/fit", json{{"samples_csv", "no,samples\nhere\n"}}.dump());
  EXPECT_EQ(r.status, 503) << r.body.dump();
  r = svc.handle("POST", "/predict", json{{"id", kept}, {"batch", 32}, {"workers", 2}}.dump());
  EXPECT_EQ(r.status, 200) << r.body.dump();
}

// What httplib would answer with an empty body is JSON too.
TEST(ServerLimits, HttpLevelErrorsAreJson) {
  Running s;
  auto a = raw_exchange(s.port, "NONSENSE\r\n\r\n");
  EXPECT_EQ(a.status, 400) << a.head;
  EXPECT_TRUE(json::parse(a.body)["error"].is_string()) << a.body;
  a = raw_exchange(s.port, "GET /" + std::string(9000, 'a') + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(a.status, 414) << a.head;
  EXPECT_TRUE(json::parse(a.body)["error"].is_string()) << a.body;
  // A head over 64 KiB is refused when the limit is reached, not read on.
  a = raw_exchange(s.port, "GET /" + std::string(1 << 20, 'a'));
  EXPECT_EQ(a.status, 431) << a.head;
  EXPECT_NE(a.head.find("Connection: close"), std::string::npos) << a.head;
  EXPECT_NE(json::parse(a.body)["error"].get<std::string>().find("65536 bytes"), std::string::npos) << a.body;
  std::string many = "GET /health HTTP/1.1\r\n";
  for (int i = 0; i < 2000; ++i) many += "X-Pad-" + std::to_string(i) + ": " + std::string(40, 'p') + "\r\n";
  a = raw_exchange(s.port, many + "\r\n");
  EXPECT_EQ(a.status, 431) << a.head;
  httplib::Client c("127.0.0.1", s.port);
  auto r = c.Post("/fit", httplib::MultipartFormDataItems{{"samples_csv", "batch,workers\n", "", ""}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 415);
  EXPECT_NE(json::parse(r->body)["error"].get<std::string>().find("JSON"), std::string::npos) << r->body;
  r = c.Put("/fit", "{}", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  EXPECT_TRUE(json::parse(r->body)["error"].is_string());
  EXPECT_EQ(r->get_header_value("Allow"), "POST");
  r = c.Post("/health", "{}", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->get_header_value("Allow"), "GET, HEAD");
  // HEAD is a GET without its body (monitors probe /health so); not a POST.
  auto head = raw_exchange(s.port, "HEAD /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(head.status, 200) << head.head;
  EXPECT_TRUE(head.body.empty()) << head.body;
  head = raw_exchange(s.port, "HEAD /fit HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(head.status, 405) << head.head;
  EXPECT_TRUE(healthy(s));
}

// Two threads, a head timeout, and a share of the threads per client (0: none).
Limits two_threads(double head_timeout_s, int per_client) {
  Limits l;
  l.threads = 2;
  l.head_timeout_s = head_timeout_s;
  l.max_connections_per_client = per_client;
  return l;
}

// Clients that send their request a byte at a time, each byte well within
// the 5 s httplib waits for one, hold a thread only until their deadline:
// with both threads taken by such clients, /health still answers within
// seconds, and each slow client gets a 408 naming the option. The deadlines
// alone: without a share per client, which on 2 threads is 1 and would let
// one of the two go sooner (OneClientsSlowConnectionsGiveWayToAnothers).
TEST(ServerLimits, ClientsSendingAByteAtATimeAre408AndHoldNoThread) {
  Running s(two_threads(1, 0));
  tpserver::TrickleAnswer in_line, in_headers;
  std::vector<std::thread> slow;
  slow.emplace_back([&] { in_line = tpserver::trickle(s.port, "GET /hea", 'l', 10); });
  slow.emplace_back([&] { in_headers = tpserver::trickle(s.port, "GET /health HTTP/1.1\r\nX-Slow: ", 'x', 10); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(healthy(s));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
  for (auto& t : slow) t.join();
  for (const auto* t : {&in_line, &in_headers}) {
    EXPECT_EQ(t->answer.status, 408) << t->answer.head;
    EXPECT_TRUE(t->answer.closed);
    EXPECT_LT(t->seconds, 5.0);
    EXPECT_NE(json::parse(t->answer.body)["error"].get<std::string>().find("--head-timeout"), std::string::npos)
        << t->answer.body;
  }
}

// Connections opened and left silent, more than the threads: while others
// wait, each gives its thread up soon after it was taken, so a request
// behind them is answered (before, each held a thread for the 5 s keep-alive
// wait, and 400 of them delayed /health by 30 s).
TEST(ServerLimits, SilentConnectionsGiveTheirThreadsUpToWaitingOnes) {
  Limits l;
  l.threads = 2;
  Running s(l);
  std::vector<int> silent;
  for (int i = 0; i < 8; ++i) silent.push_back(tpserver::connect_local(s.port));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(healthy(s));
  EXPECT_GT(s.http.silent_connections_let_go(), 0u);
  for (int fd : silent) ::close(fd);
  // With threads free, a connection may wait for its first request as long
  // as ever: the threads that served the closed ones let them go first.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const uint64_t let_go = s.http.silent_connections_let_go();
  int fd = tpserver::connect_local(s.port);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const std::string req = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(::send(fd, req.data(), req.size(), MSG_NOSIGNAL), static_cast<ssize_t>(req.size()));
  char buf[64] = {};
  EXPECT_GT(::recv(fd, buf, sizeof buf - 1, 0), 0);
  EXPECT_EQ(std::string(buf).rfind("HTTP/1.1 200", 0), 0u) << buf;
  ::close(fd);
  EXPECT_EQ(s.http.silent_connections_let_go(), let_go);
}

// A request whose head comes a byte every 200 ms, from the loopback address
// `from`, for `for_s` seconds (tpserver::trickle).
std::thread trickling(int port, tpserver::TrickleAnswer& into, double for_s, const char* from = nullptr) {
  return std::thread([port, &into, for_s, from] {
    into = tpserver::trickle(port, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", 'a', for_s, from);
  });
}

const std::string kHealthClose = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";

// One client's slow connections hold every thread: another client's request
// is served once one of their heads has been arriving for 0.5 s, not when their
// head timeout (60 s here) or the client lets go; the one that gave its
// thread up is answered 503 with Retry-After.
TEST(ServerLimits, OneClientsSlowConnectionsGiveWayToAnothers) {
  Running s(two_threads(60, 1));
  std::vector<tpserver::TrickleAnswer> slow(2);
  std::vector<std::thread> tricklers;
  for (auto& t : slow) tricklers.push_back(trickling(s.port, t, 3));
  EXPECT_TRUE(tpserver::wait_until([&] { return s.http.connections_served() == 2; }, 5));
  // Without the share, the threads are free when the tricklers give up, at about 5 s.
  const auto other = raw_exchange(s.port, kHealthClose, 3, "127.0.0.2");
  for (auto& t : tricklers) t.join();
  EXPECT_EQ(other.status, 200) << other.head;
  int gave_up = 0;
  for (const auto& t : slow) {
    if (t.answer.status != 503) continue;
    ++gave_up;
    EXPECT_NE(t.answer.head.find("Retry-After: 1"), std::string::npos) << t.answer.head;
    EXPECT_NE(json::parse(t.answer.body)["error"].get<std::string>().find("--max-connections-per-client"),
              std::string::npos)
        << t.answer.body;
  }
  EXPECT_EQ(gave_up, 1);
  EXPECT_EQ(s.http.connections_over_share(), 1u);
}

// A client holding its share while others wait has a new connection refused
// at once (503), and another client's, under its share, is served.
TEST(ServerLimits, AConnectionPastItsClientsShareIsRefusedWhileOthersWait) {
  Running s(two_threads(60, 1));
  // One slow connection of each client takes each thread; the second
  // client's lets go first, at about 3 s.
  tpserver::TrickleAnswer first, second;
  std::vector<std::thread> tricklers;
  tricklers.push_back(trickling(s.port, first, 3.5));
  tricklers.push_back(trickling(s.port, second, 1, "127.0.0.2"));
  EXPECT_TRUE(tpserver::wait_until([&] { return s.http.connections_served() == 2; }, 5));
  tpserver::RawAnswer past_share, under_share;
  std::thread a([&] { past_share = raw_exchange(s.port, kHealthClose, 8); });
  EXPECT_TRUE(tpserver::wait_until([&] { return s.http.connections_waiting() == 1; }, 5));
  std::thread b([&] { under_share = raw_exchange(s.port, kHealthClose, 8, "127.0.0.2"); });
  EXPECT_TRUE(tpserver::wait_until([&] { return s.http.connections_waiting() == 2; }, 5));
  a.join();
  b.join();
  for (auto& t : tricklers) t.join();
  EXPECT_EQ(past_share.status, 503) << past_share.head;
  EXPECT_NE(past_share.head.find("Retry-After: 1"), std::string::npos) << past_share.head;
  EXPECT_EQ(under_share.status, 200) << under_share.head;
  EXPECT_EQ(s.http.connections_over_share(), 1u);
  // /health tells a monitor so.
  int st = 0;
  const json health = s.get("/health", &st);
  EXPECT_EQ(st, 200);
  EXPECT_EQ(health["connections"]["let_go_over_share"], 1) << health.dump();
  EXPECT_EQ(health["connections"]["threads"], 2) << health.dump();
  EXPECT_GE(health["connections"]["served"], 1) << health.dump();
}

// A body sent a byte at a time must still arrive within the request's time limit.
TEST(ServerLimits, ABodySentAByteAtATimeIs408AtTheRequestsTimeLimit) {
  Limits l;
  l.request_timeout_s = 1;
  Running s(l);
  auto t = tpserver::trickle(
      s.port, "POST /fit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{", ' ',
      10);
  EXPECT_EQ(t.answer.status, 408) << t.answer.head;
  EXPECT_TRUE(t.answer.closed);
  EXPECT_LT(t.seconds, 5.0);
  EXPECT_NE(json::parse(t.answer.body)["error"].get<std::string>().find("--request-timeout"), std::string::npos)
      << t.answer.body;
  EXPECT_TRUE(healthy(s));
}

// Everything the server sends on one connection for `request` (sent whole),
// until it closes the connection or 3 s pass.
std::string all_answers(int port, const std::string& request) {
  int fd = tpserver::connect_local(port);
  if (fd < 0) return "";
  timeval tv{3, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string in;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) in.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return in;
}

size_t answers_in(const std::string& text) {
  size_t n = 0;
  for (size_t at = text.find("HTTP/1.1 "); at != std::string::npos; at = text.find("HTTP/1.1 ", at + 1)) ++n;
  return n;
}

// A request after a body the server did not read (a GET's, or one refused
// before it was read) is not taken from that body: the connection closes
// after the first answer.
TEST(ServerLimits, NoRequestIsReadOutOfAnUnreadBody) {
  Running s;
  const std::string smuggled = "GET /fits HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  auto get = all_answers(s.port, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " +
                                     std::to_string(smuggled.size()) + "\r\n\r\n" + smuggled);
  EXPECT_EQ(answers_in(get), 1u) << get;
  EXPECT_NE(get.find("200 OK"), std::string::npos) << get;
  auto refused = all_answers(s.port, "POST /fit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1x\r\n\r\n" + smuggled);
  EXPECT_EQ(answers_in(refused), 1u) << refused;
  EXPECT_NE(refused.find("400 Bad Request"), std::string::npos) << refused;
  // Two whole requests on one connection are both answered.
  auto two = all_answers(s.port, "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /health HTTP/1.1\r\nHost: "
                                 "127.0.0.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(answers_in(two), 2u) << two;
  EXPECT_NE(two.find("200 OK"), two.rfind("200 OK")) << two;  // both served
  // A request refused as foreign closes its connection: its body is never read as a request.
  auto foreign = all_answers(s.port, "GET /health HTTP/1.1\r\nHost: evil.example\r\nContent-Length: " +
                                         std::to_string(smuggled.size()) + "\r\n\r\n" + smuggled);
  EXPECT_EQ(answers_in(foreign), 1u) << foreign;
  EXPECT_NE(foreign.find("403 Forbidden"), std::string::npos) << foreign;
}

// Stopped while it fits the operator's --samples, before it serves: exit 0 at once.
TEST(ServeCli, AStopWhileTheStartingFitRunsExitsZero) {
  const std::string samples = tptest::write_file(tptest::temp_dir("serve_start_fit") / "s.csv",
                                                 tpserver::spread_rows_csv(10000));
  auto p = tpserver::spawn_serve({"--samples", samples});  // waits up to 5 s for an address it never prints
  ASSERT_GT(p.pid, 0);
  ::kill(p.pid, SIGTERM);
  if (p.port != 0) {
    tpserver::wait_exit(p.pid, 5);
    GTEST_SKIP() << "the fit of 10,000 rows ended within 5 s: no stop during it to test";
  }
  const int status = tpserver::wait_exit(p.pid, 5);
  ASSERT_NE(status, -1) << "still running 5 s after SIGTERM";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status << ": " << p.err();
  EXPECT_NE(p.err().find("stopped before serving"), std::string::npos) << p.err();
}

// SIGINT while requests compute: each answers 503 and the process exits 0
// within about a second. (The bound is the contract under test: before, an
// auto /fit of 1,000 rows held the process for its whole 40 s.)
TEST(ServeCli, StopsPromptlyWhileRequestsCompute) {
  auto p = tpserver::spawn_serve();
  ASSERT_GT(p.port, 0) << "no address printed: " << p.err();
  std::atomic<int> answered{0};
  std::vector<int> status(2, 0);
  std::vector<std::string> body(2);
  std::vector<std::thread> ts;
  for (int i = 0; i < 2; ++i)
    ts.emplace_back([&, i] {
      httplib::Client c("127.0.0.1", p.port);
      c.set_read_timeout(60, 0);
      if (auto r = c.Post("/fit", slow_fit().dump(), "application/json")) status[i] = r->status, body[i] = r->body;
      ++answered;
    });
  // Until /health says both fits are under way (computing or waiting for a slot).
  httplib::Client c("127.0.0.1", p.port);
  int under_way = 0;  // -1 when /health does not answer
  tpserver::wait_until(
      [&] {
        auto h = c.Get("/health");
        if (!h) return (under_way = -1), true;
        json hj = json::parse(h->body);
        under_way = hj["computing"].get<int>() + hj["waiting"].get<int>();
        return under_way >= 2;
      },
      30);
  ASSERT_GE(under_way, 0) << "/health did not answer";
  ASSERT_EQ(under_way, 2) << "the two fits were not under way within 30 s";
  EXPECT_EQ(answered, 0);
  const auto t0 = std::chrono::steady_clock::now();
  kill(p.pid, SIGINT);
  const int ws = tpserver::wait_exit(p.pid, 10);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (auto& t : ts) t.join();
  ASSERT_NE(ws, -1) << "still running 10 s after SIGINT";
  ASSERT_TRUE(WIFEXITED(ws));
  EXPECT_EQ(WEXITSTATUS(ws), 0) << p.err();
  EXPECT_LT(took, 2.0);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(status[i], 503) << body[i];
    EXPECT_NE(body[i].find("stopping"), std::string::npos) << body[i];
  }
}

}  // namespace

// A request whose client closes its connection before the answer is
// abandoned: its slot frees within moments, not when its computation would
// have ended (a slow fit computes for about 50 s), and the next request in
// the pool is served.
TEST(ServerLimits, ARequestWhoseClientHungUpIsAbandoned) {
  Running s(one_slot(1));
  const std::string body = slow_fit().dump();
  const int fd = tpserver::connect_local(s.port);
  ASSERT_GE(fd, 0);
  const std::string request = "POST /fit HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body;
  for (size_t at = 0; at < request.size();) {
    const ssize_t n = ::send(fd, request.data() + at, request.size() - at, MSG_NOSIGNAL);
    ASSERT_GT(n, 0);
    at += size_t(n);
  }
  ASSERT_TRUE(s.wait_in_flight(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // computing now
  ::close(fd);
  const auto hung_up = std::chrono::steady_clock::now();
  ASSERT_TRUE(tpserver::wait_until([&] { return s.service.in_flight() == 0; }, 10));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - hung_up).count(), 5);
  int st = 0;
  s.post("/fit", quick_fit(many_rows_csv(40)), &st);
  EXPECT_EQ(st, 200);
}

// A body of many small JSON values (an 8 MiB `{"x":[{},{},...]}` parsed to
// 300 MB) is refused, 413, before it is parsed; a body of the same size as
// text in one string is read.
TEST(ServerLimits, ABodyOfTooManyJsonValuesIs413BeforeItIsParsed) {
  Running s;
  std::string many = "{\"x\":[";
  for (size_t i = 0; i < trainplan::server::kMostBodyJsonValues; ++i) many += i ? ",{}" : "{}";
  many += "]}";
  int st = 0;
  httplib::Client c("127.0.0.1", s.port);
  auto r = c.Post("/predict", many, "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413) << r->body;
  EXPECT_NE(json::parse(r->body)["error"].get<std::string>().find("JSON values"), std::string::npos) << r->body;
  // Commas inside a string are text, not values.
  auto text = s.post("/predict", json{{"samples_csv", std::string(3 * trainplan::server::kMostBodyJsonValues, ',')},
                                      {"batch", 32}, {"workers", 2}},
                     &st);
  EXPECT_NE(st, 413) << text.dump();
  EXPECT_TRUE(healthy(s));
}

// Settings the server cannot serve with are refused before it listens: a
// default model no registry knows (every request naming none would be blamed
// for it), a body limit past 1 GiB (the bound on bodies held would overflow).
TEST(ServeCli, RefusesADefaultModelItDoesNotKnowAndAnUnboundedBody) {
  auto model = tptest::run_cli("serve --port 0 --model nope");
  EXPECT_EQ(model.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(model.err, "", 0, "--model", {"unknown model 'nope'"})) << model.err;
  auto body = tptest::run_cli("serve --port 0 --max-body-bytes 4611686018427387904");
  EXPECT_EQ(body.exit_code, 2);
  EXPECT_TRUE(tptest::names_input_error(body.err, "", 0, "--max-body-bytes", {"1 GiB"})) << body.err;
}

namespace {

// A page of another site may not use the server through a visitor's browser
// (its Origin is not the server's own), and a loopback-bound server answers
// no Host name a DNS answer could point at it (DNS rebinding); programs,
// which send no Origin, and the page itself are served.
TEST(ServerLimits, ForeignPagesAndHostNamesAre403) {
  Running s;
  const std::string body = "{\"samples_csv\":\"batch,workers,epochs,epoch_time_s\\n16,1,1,2\\n\"}";
  auto post = [&](const std::string& headers) {
    return raw_exchange(s.port, "POST /fit HTTP/1.1\r\n" + headers + "Content-Type: text/plain\r\nContent-Length: " +
                                    std::to_string(body.size()) + "\r\n\r\n" + body);
  };
  const std::string own = fmt::format("127.0.0.1:{}", s.port);
  for (const std::string& headers :
       {"Host: " + own + "\r\nOrigin: http://evil.example\r\n", "Host: " + own + "\r\nOrigin: null\r\n",
        std::string("Host: evil.example\r\n"), std::string("Host: evil.example\r\nOrigin: http://evil.example\r\n"),
        "Host: 127.evil.example:" + std::to_string(s.port) + "\r\n"}) {
    const auto a = post(headers);
    EXPECT_EQ(a.status, 403) << headers << a.body;
    EXPECT_TRUE(json::parse(a.body).contains("error")) << a.body;
  }
  for (const std::string& headers : {"Host: " + own + "\r\n", "Host: " + own + "\r\nOrigin: http://" + own + "\r\n",
                                     fmt::format("Host: localhost:{}\r\nOrigin: http://localhost:{}\r\n", s.port, s.port),
                                     fmt::format("Host: [::1]:{}\r\n", s.port)}) {
    const auto a = post(headers);
    EXPECT_NE(a.status, 403) << headers << a.body;
  }
  const auto get = raw_exchange(s.port, "GET /health HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(get.status, 403) << get.body;
  // A name given with --allow-host (a proxy's) is served.
  trainplan::server::Service service("auto", {}, {});
  trainplan::server::HttpServer http(service);
  const int port = http.bind("127.0.0.1", 0, {"Plan.Example"});
  std::thread t([&] { http.listen(); });
  const auto allowed = raw_exchange(port, "GET /health HTTP/1.1\r\nHost: plan.example\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(allowed.status, 200) << allowed.body;
  http.stop();
  t.join();
}

}  // namespace
