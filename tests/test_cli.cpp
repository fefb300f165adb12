// tests/test_cli.cpp: end-to-end tests of the `vlec` command-line tool.
//
// Each test runs the real binary (VLEC_CLI_PATH, set by the build) through the
// shell inside a fresh temporary directory, on generated (never all-zero)
// data, and checks what a user would see: exit codes, output files, that
// inputs are kept or removed as asked, and that a failure leaves neither a
// partial output nor a temporary file behind. Without VLEC_CLI_PATH every
// test is skipped.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

#include "gen/generators.hpp"

namespace {

namespace fs = std::filesystem;

struct RunResult {
  int code = -1;  // exit status, or -1 if killed by a signal
  std::string out, err;
};

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(f.good()) << "cannot write " << p;
}

// Seed for the generated data: fixed so failures reproduce, overridable with
// VLEC_TEST_SEED, and always printed.
uint64_t test_seed(uint64_t fallback) {
  if (const char* env = std::getenv("VLEC_TEST_SEED")) return std::strtoull(env, nullptr, 10);
  return fallback;
}

std::string make_data(const std::string& generator, std::size_t bytes, uint64_t seed) {
  std::cout << "[   data   ] " << generator << ", " << bytes << " bytes, seed " << seed << std::endl;
  vlec::gen::Sample s = vlec::gen::make(generator, bytes, seed);
  return std::string(s.bytes.begin(), s.bytes.end());
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef VLEC_CLI_PATH
    GTEST_SKIP() << "VLEC_CLI_PATH is not defined: the vlec tool was not built with the tests";
#else
    cli_ = VLEC_CLI_PATH;
    if (!fs::exists(cli_)) GTEST_SKIP() << "vlec tool not found at " << cli_;
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/vlec_cli_test.XXXXXX";
    std::vector<char> name(templ.begin(), templ.end());
    name.push_back('\0');
    ASSERT_NE(mkdtemp(name.data()), nullptr) << "mkdtemp failed";
    root_ = name.data();
    dir_ = root_ / "work";  // the tool's files only; captured output lives in root_
    fs::create_directories(dir_);
#endif
  }

  void TearDown() override {
    if (!root_.empty()) {
      std::error_code ec;
      fs::remove_all(root_, ec);
    }
  }

  // Runs a shell command line in the work directory with $VLEC set to the tool.
  // stdin is /dev/null unless the command line redirects it.
  RunResult sh(const std::string& command) {
    const fs::path out = root_ / "stdout", err = root_ / "stderr";
    std::string line = "cd '" + dir_.string() + "' && VLEC='" + cli_ + "' && export VLEC && { " + command +
                       " ; } </dev/null >'" + out.string() + "' 2>'" + err.string() + "'";
    int status = std::system(line.c_str());
    RunResult r;
    r.code = (status != -1 && WIFEXITED(status)) ? WEXITSTATUS(status) : -1;
    r.out = read_file(out);
    r.err = read_file(err);
    return r;
  }

  // Runs the tool with these arguments.
  RunResult vlec(const std::string& args) { return sh("\"$VLEC\" " + args); }

  fs::path path(const std::string& name) const { return dir_ / name; }
  bool exists(const std::string& name) const { return fs::exists(path(name)); }
  std::string contents(const std::string& name) const { return read_file(path(name)); }

  // Names in the work directory that look like the tool's temporary files.
  std::vector<std::string> temporaries() const {
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(dir_)) {
      std::string n = e.path().filename().string();
      if (n.find(".tmp.") != std::string::npos) found.push_back(n);
    }
    return found;
  }

  std::string cli_;
  fs::path root_, dir_;
};

std::string describe(const RunResult& r) {
  return "exit " + std::to_string(r.code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

TEST_F(Cli, RoundTripThroughFiles) {
  const std::string data = make_data("text", 1 << 20, test_seed(101));
  write_file(path("in.txt"), data);

  RunResult c = vlec("in.txt");
  ASSERT_EQ(c.code, 0) << describe(c);
  ASSERT_TRUE(exists("in.txt.vlec"));
  EXPECT_LT(fs::file_size(path("in.txt.vlec")), data.size()) << "text should compress";
  EXPECT_EQ(contents("in.txt"), data) << "the input must not change";

  RunResult d = vlec("-d in.txt.vlec -o out.txt");
  ASSERT_EQ(d.code, 0) << describe(d);
  EXPECT_TRUE(contents("out.txt") == data) << "round trip differs";
  EXPECT_TRUE(temporaries().empty());

  // Decompressing to the default name strips .vlec.
  fs::remove(path("in.txt"));
  RunResult d2 = vlec("-d in.txt.vlec");
  ASSERT_EQ(d2.code, 0) << describe(d2);
  EXPECT_TRUE(contents("in.txt") == data);
}

TEST_F(Cli, RoundTripThroughPipes) {
  const std::string data = make_data("skewed", 1 << 20, test_seed(102));
  write_file(path("in.bin"), data);

  RunResult r = sh("cat in.bin | \"$VLEC\" -c | \"$VLEC\" -d -c > out.bin");
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_TRUE(contents("out.bin") == data) << "pipe round trip differs";

  // No input at all means stdin to stdout; '-' names stdin explicitly.
  RunResult r2 = sh("\"$VLEC\" < in.bin > s.vlec && \"$VLEC\" -d - < s.vlec > out2.bin");
  ASSERT_EQ(r2.code, 0) << describe(r2);
  EXPECT_TRUE(contents("out2.bin") == data);
}

TEST_F(Cli, MultipleFrames) {
  const std::string data = make_data("skewed", 3 << 20, test_seed(103));
  write_file(path("in.bin"), data);

  RunResult c = vlec("--frame-size 1 in.bin");
  ASSERT_EQ(c.code, 0) << describe(c);
  RunResult info = vlec("info in.bin.vlec");
  ASSERT_EQ(info.code, 0) << describe(info);
  EXPECT_TRUE(std::regex_search(info.out, std::regex(R"(frames:\s+3\b)"))) << info.out;

  RunResult d = vlec("-d in.bin.vlec -o out.bin");
  ASSERT_EQ(d.code, 0) << describe(d);
  EXPECT_TRUE(contents("out.bin") == data) << "multi-frame round trip differs";

  // Frames stream through pipes too (stdin of unknown size).
  RunResult p = sh("cat in.bin | \"$VLEC\" --frame-size 1 -c > p.vlec && \"$VLEC\" -d -c < p.vlec > p.bin");
  ASSERT_EQ(p.code, 0) << describe(p);
  EXPECT_TRUE(contents("p.bin") == data);
}

TEST_F(Cli, RefusesToOverwriteWithoutForce) {
  const std::string data = make_data("text", 256 << 10, test_seed(104));
  write_file(path("in.txt"), data);
  const std::string sentinel = "not a vlec stream, must survive";
  write_file(path("in.txt.vlec"), sentinel);

  RunResult c = vlec("in.txt");
  EXPECT_EQ(c.code, 4) << describe(c);
  EXPECT_NE(c.err.find("in.txt.vlec"), std::string::npos) << "the message should name the output: " << c.err;
  EXPECT_EQ(contents("in.txt.vlec"), sentinel) << "existing output must be unchanged";
  EXPECT_TRUE(temporaries().empty());

  RunResult f = vlec("-f in.txt");
  ASSERT_EQ(f.code, 0) << describe(f);
  EXPECT_NE(contents("in.txt.vlec"), sentinel);

  // Decompressing over the existing in.txt is refused the same way.
  RunResult d = vlec("-d in.txt.vlec");
  EXPECT_EQ(d.code, 4) << describe(d);
  EXPECT_TRUE(contents("in.txt") == data);
  RunResult df = vlec("-d -f in.txt.vlec");
  ASSERT_EQ(df.code, 0) << describe(df);
  EXPECT_TRUE(contents("in.txt") == data);
}

TEST_F(Cli, NoPartialOutputAfterError) {
  const std::string data = make_data("text", 1 << 20, test_seed(105));
  write_file(path("in.txt"), data);
  RunResult c = vlec("-o good.vlec in.txt");
  ASSERT_EQ(c.code, 0) << describe(c);
  const std::string stream = contents("good.vlec");
  ASSERT_GT(stream.size(), 1000u);

  write_file(path("truncated.vlec"), stream.substr(0, stream.size() / 2));
  RunResult t = vlec("-d truncated.vlec -o truncated.out");
  EXPECT_EQ(t.code, 3) << describe(t);
  EXPECT_FALSE(exists("truncated.out"));
  RunResult t2 = vlec("-d truncated.vlec");  // default output name "truncated"
  EXPECT_EQ(t2.code, 3) << describe(t2);
  EXPECT_FALSE(exists("truncated"));

  std::string corrupt = stream;
  for (std::size_t i = corrupt.size() / 2; i < corrupt.size() / 2 + 16; ++i) corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
  write_file(path("corrupt.vlec"), corrupt);
  RunResult k = vlec("-d corrupt.vlec -o corrupt.out");
  EXPECT_EQ(k.code, 3) << describe(k);
  EXPECT_FALSE(exists("corrupt.out"));
  EXPECT_NE(k.err.find("corrupt.vlec"), std::string::npos) << "the message should name the file: " << k.err;

  // A stream whose header is damaged, and a file that is not a stream at all.
  std::string bad_header = stream;
  bad_header[4] = static_cast<char>(bad_header[4] ^ 0xff);
  write_file(path("header.vlec"), bad_header);
  RunResult h = vlec("-d header.vlec -o header.out");
  EXPECT_EQ(h.code, 3) << describe(h);
  EXPECT_FALSE(exists("header.out"));
  RunResult n = vlec("-d in.txt -o notastream.out");
  EXPECT_EQ(n.code, 3) << describe(n);
  EXPECT_FALSE(exists("notastream.out"));

  EXPECT_TRUE(temporaries().empty()) << "a temporary file was left behind";
  EXPECT_TRUE(contents("in.txt") == data);
}

TEST_F(Cli, KeepsInputByDefaultAndRemovesWithRm) {
  const std::string data = make_data("skewed", 300000, test_seed(106));
  write_file(path("a.bin"), data);

  RunResult k = vlec("a.bin");
  ASSERT_EQ(k.code, 0) << describe(k);
  EXPECT_TRUE(exists("a.bin"));
  EXPECT_TRUE(exists("a.bin.vlec"));

  RunResult kk = vlec("-k -f a.bin");
  ASSERT_EQ(kk.code, 0) << describe(kk);
  EXPECT_TRUE(exists("a.bin"));

  RunResult r = vlec("--rm -f a.bin");
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_FALSE(exists("a.bin"));
  ASSERT_TRUE(exists("a.bin.vlec"));

  RunResult d = vlec("-d --rm a.bin.vlec");
  ASSERT_EQ(d.code, 0) << describe(d);
  EXPECT_FALSE(exists("a.bin.vlec"));
  EXPECT_TRUE(contents("a.bin") == data);

  // --rm removes nothing when the command fails.
  write_file(path("odd.bin"), data.substr(0, 12345));
  RunResult f = vlec("--rm --dtype u16 odd.bin");
  EXPECT_NE(f.code, 0);
  EXPECT_TRUE(exists("odd.bin"));
}

TEST_F(Cli, OddSizeWithU16Fails) {
  const std::string data = make_data("skewed", 100001, test_seed(107));
  ASSERT_EQ(data.size() % 2, 1u);
  write_file(path("odd.bin"), data);

  RunResult r = vlec("--dtype u16 odd.bin");
  EXPECT_EQ(r.code, 2) << describe(r);
  EXPECT_NE(r.err.find("odd.bin"), std::string::npos) << r.err;
  EXPECT_FALSE(exists("odd.bin.vlec"));
  EXPECT_TRUE(temporaries().empty());

  // The same through a pipe, where the size is only known at the end.
  RunResult p = sh("cat odd.bin | \"$VLEC\" --dtype u16 -o piped.vlec");
  EXPECT_EQ(p.code, 2) << describe(p);
  EXPECT_FALSE(exists("piped.vlec"));
  EXPECT_TRUE(temporaries().empty());
}

TEST_F(Cli, InfoMentionsCodec) {
  const std::string data = make_data("text", 512 << 10, test_seed(108));
  write_file(path("in.txt"), data);
  for (const std::string codec : {"huffman", "raw"}) {
    RunResult c = vlec("-f --codec " + codec + " -o s.vlec in.txt");
    ASSERT_EQ(c.code, 0) << describe(c);
    RunResult i = vlec("info s.vlec");
    ASSERT_EQ(i.code, 0) << describe(i);
    EXPECT_TRUE(std::regex_search(i.out, std::regex("codec:\\s+" + codec))) << i.out;
    EXPECT_TRUE(std::regex_search(i.out, std::regex(R"(frames:\s+1\b)"))) << i.out;
    EXPECT_TRUE(std::regex_search(i.out, std::regex("decompressed:\\s+" + std::to_string(data.size()))))
        << i.out;
  }
  RunResult bad = vlec("info in.txt");
  EXPECT_EQ(bad.code, 3) << describe(bad);
}

TEST_F(Cli, BenchPrintsZlibRow) {
  RunResult r = vlec("bench --synthetic skewed --size 1 --repeat 1 --seed 7");
  ASSERT_EQ(r.code, 0) << describe(r);
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"((^|\n)zlib\s)"))) << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"((^|\n)vlec\s)"))) << r.out;
  EXPECT_NE(r.out.find("seed 7"), std::string::npos) << r.out;
}

TEST_F(Cli, EveryCodecRoundTrips) {
  const std::string text = make_data("text", 700000, test_seed(109));
  const std::string skewed = make_data("skewed", 700000, test_seed(110));
  write_file(path("text.bin"), text);
  write_file(path("skewed.bin"), skewed);
  for (const std::string codec : {"auto", "huffman", "rle", "rle+huffman", "raw"}) {
    for (const std::string input : {"text.bin", "skewed.bin"}) {
      SCOPED_TRACE("codec " + codec + ", input " + input);
      RunResult c = vlec("-f -T2 --codec " + codec + " -o c.vlec " + input);
      ASSERT_EQ(c.code, 0) << describe(c);
      RunResult d = vlec("-f -d c.vlec -o c.out");
      ASSERT_EQ(d.code, 0) << describe(d);
      EXPECT_TRUE(contents("c.out") == contents(input)) << "round trip differs";
    }
  }
}

TEST_F(Cli, UsageAndInputErrors) {
  const std::string data = make_data("text", 4096, test_seed(111));
  write_file(path("in.txt"), data);
  EXPECT_EQ(vlec("--no-such-option in.txt").code, 1);
  EXPECT_EQ(vlec("--codec nonsense in.txt").code, 1);
  EXPECT_EQ(vlec("-d in.txt").code, 1) << "no .vlec suffix and no -o";
  EXPECT_EQ(vlec("-o x.vlec in.txt in.txt").code, 1) << "-o with two inputs";
  EXPECT_EQ(vlec("missing.txt").code, 2);
  EXPECT_FALSE(exists("missing.txt.vlec"));
  RunResult h = vlec("--help");
  EXPECT_EQ(h.code, 0);
  EXPECT_NE(h.out.find("Exit codes"), std::string::npos) << h.out;
  EXPECT_TRUE(temporaries().empty());
}


// A photograph-like PNM file: gradient, texture, an edge and noise, with a
// header holding a comment (kept byte for byte by --codec wavelet).
std::string pnm_image(bool colour, unsigned maxval, std::size_t w, std::size_t h, uint64_t seed) {
  std::cout << "[   data   ] PNM " << (colour ? "P6 " : "P5 ") << w << "x" << h << " maxval " << maxval << ", seed "
            << seed << std::endl;
  std::string out = std::string(colour ? "P6" : "P5") + "\n# made by test_cli\n" + std::to_string(w) + " " +
                    std::to_string(h) + "\n" + std::to_string(maxval) + "\n";
  uint64_t x = seed | 1;
  auto rnd = [&] {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return static_cast<double>(x % 1000) / 1000.0;
  };
  const unsigned planes = colour ? 3 : 1;
  for (std::size_t j = 0; j < h; ++j)
    for (std::size_t i = 0; i < w; ++i)
      for (unsigned p = 0; p < planes; ++p) {
        double v = 0.2 + 0.4 * i / w + 0.2 * j / h + 0.1 * std::sin(0.2 * i) * std::cos(0.13 * j) + 0.05 * p;
        if (i > w / 3 && j > h / 2) v *= 0.6;
        v = std::min(1.0, std::max(0.0, v + 0.02 * (rnd() - 0.5)));
        const unsigned s = static_cast<unsigned>(v * maxval + 0.5);
        if (maxval > 255) out.push_back(static_cast<char>(s >> 8));
        out.push_back(static_cast<char>(s & 0xFF));
      }
  return out;
}

TEST_F(Cli, WaveletPgmAndPpmRoundTripByteForByte) {
  struct Case { const char* name; bool colour; unsigned maxval; std::size_t w, h; };
  for (const Case& c : {Case{"gray.pgm", false, 255, 301, 203}, Case{"colour.ppm", true, 255, 256, 130},
                        Case{"deep.ppm", true, 65535, 97, 61}, Case{"twelve.pgm", false, 4095, 64, 1}}) {
    SCOPED_TRACE(c.name);
    const std::string img = pnm_image(c.colour, c.maxval, c.w, c.h, test_seed(120 + c.w));
    write_file(path(c.name), img);
    RunResult r = vlec(std::string("-f -v --codec wavelet ") + c.name);
    ASSERT_EQ(r.code, 0) << describe(r);
    EXPECT_NE(r.err.find("codec wavelet"), std::string::npos) << r.err;
    if (c.h > 1) EXPECT_LT(fs::file_size(path(std::string(c.name) + ".vlec")), img.size());
    RunResult d = vlec(std::string("-f -d -o back ") + c.name + ".vlec");
    ASSERT_EQ(d.code, 0) << describe(d);
    EXPECT_TRUE(contents("back") == img) << "not byte-identical";
    RunResult i = vlec(std::string("info ") + c.name + ".vlec");
    ASSERT_EQ(i.code, 0) << describe(i);
    EXPECT_NE(i.out.find("wavelet"), std::string::npos) << i.out;
  }
  // Through pipes as well.
  RunResult p = sh("cat colour.ppm | \"$VLEC\" --codec wavelet -c | \"$VLEC\" -d -c > piped.ppm");
  ASSERT_EQ(p.code, 0) << describe(p);
  EXPECT_TRUE(contents("piped.ppm") == contents("colour.ppm"));
}

TEST_F(Cli, WaveletRawWithShape) {
  // A raw u16 volume and a raw 3-plane u8 image, described on the command line.
  std::string vol = make_data("volume", 40 * 30 * 20, test_seed(130));
  vol.resize(40 * 30 * 20);  // the generator rounds up to a cube
  std::string vol16;
  for (char ch : vol) vol16 += std::string{ch, static_cast<char>(ch ^ 0x5A)};
  write_file(path("vol.raw"), vol16);
  RunResult c = vlec("-f --codec wavelet --shape 40x30x20 --dtype u16 --levels 3 vol.raw");
  ASSERT_EQ(c.code, 0) << describe(c);
  ASSERT_EQ(vlec("-f -d -o vol.back vol.raw.vlec").code, 0);
  EXPECT_TRUE(contents("vol.back") == vol16);
  const std::string rgb = pnm_image(true, 255, 50, 40, test_seed(131));
  write_file(path("rgb.raw"), rgb.substr(rgb.size() - 50 * 40 * 3));
  c = vlec("-f --codec wavelet --shape 50x40 --planes 3 --no-rct rgb.raw");
  ASSERT_EQ(c.code, 0) << describe(c);
  ASSERT_EQ(vlec("-f -d -o rgb.back rgb.raw.vlec").code, 0);
  EXPECT_TRUE(contents("rgb.back") == contents("rgb.raw"));
}

TEST_F(Cli, WaveletErrors) {
  const std::string img = pnm_image(false, 255, 40, 30, test_seed(140));
  write_file(path("img.pgm"), img);
  write_file(path("plain.bin"), make_data("text", 1200, test_seed(141)));
  EXPECT_EQ(vlec("--codec wavelet plain.bin").code, 1) << "raw input without --shape";
  EXPECT_EQ(vlec("--codec wavelet --shape 10x0 plain.bin").code, 1);
  EXPECT_EQ(vlec("--codec wavelet --shape 10xx2 plain.bin").code, 1);
  EXPECT_EQ(vlec("--codec wavelet --shape 10x10 --dtype u32 plain.bin").code, 1);
  EXPECT_EQ(vlec("--codec wavelet --planes 5 --shape 10x10 plain.bin").code, 1);
  EXPECT_EQ(vlec("--codec wavelet --shape 10x10 plain.bin").code, 2) << "size does not match the shape";
  EXPECT_FALSE(exists("plain.bin.vlec"));
  write_file(path("cut.pgm"), img.substr(0, img.size() - 7));
  EXPECT_EQ(vlec("--codec wavelet cut.pgm").code, 2) << "truncated PGM";
  write_file(path("long.pgm"), img + "x");
  EXPECT_EQ(vlec("--codec wavelet long.pgm").code, 2) << "trailing data";
  write_file(path("bad.pgm"), "P5\n40 30\n70000\n" + img.substr(img.size() - 1200));
  EXPECT_EQ(vlec("--codec wavelet bad.pgm").code, 2) << "maxval above 65535";
  EXPECT_FALSE(exists("cut.pgm.vlec") || exists("long.pgm.vlec") || exists("bad.pgm.vlec"));
  // A damaged wavelet stream is reported as corrupt, with no output left behind.
  ASSERT_EQ(vlec("-f --codec wavelet img.pgm").code, 0);
  std::string s = contents("img.pgm.vlec");
  s[s.size() / 2] ^= 0x21;
  write_file(path("bad.vlec"), s);
  EXPECT_EQ(vlec("-d bad.vlec -o bad.out").code, 3);
  EXPECT_FALSE(exists("bad.out"));
  EXPECT_TRUE(temporaries().empty());
}

}  // namespace
