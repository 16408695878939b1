// hubwatch calibrate given input it must refuse: something that is not a regular file (a fifo
// as --measurements, as --configs or inside it) and records whose measured values are out of
// range. Each is exit 2 with one line naming the file (clipped, as every message quotes a
// path), or the record and the field. Every run is in a child process with an alarm, so a
// regression that waits on a fifo fails instead of hanging the suite.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "daemon/commands.h"
#include "estimator/base/text.h"
#include "tests/daemon/scratch_dir.h"

namespace hubwatch::cli {
namespace {

const std::string kFixtures = HUBWATCH_FIXTURES_DIR;

struct Outcome {
  int status = -1;  // the exit code; 128 + N when killed by signal N
  std::string err;
};

class CliCalibrateTest : public hubwatch::testing::ScratchDirTest {
 protected:
  // RunCalibrate(args) in a forked child that SIGALRM ends after `limit_s` seconds.
  static Outcome Calibrate(const Args& args, unsigned limit_s = 10) {
    int pipe_fds[2];
    EXPECT_EQ(::pipe(pipe_fds), 0);
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(pipe_fds[0]);
      ::alarm(limit_s);
      std::ostringstream out, err;
      const int status = RunCalibrate(args, out, err);
      const std::string text = err.str();
      for (size_t done = 0; done < text.size();) {
        const ssize_t n = ::write(pipe_fds[1], text.data() + done, text.size() - done);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
      }
      ::_exit(status);
    }
    ::close(pipe_fds[1]);
    Outcome o;
    char buf[4096];
    for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;) o.err.append(buf, n);
    ::close(pipe_fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    o.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return o;
  }
  std::string Fifo(const std::string& name) {
    const std::string path = (dir_ / name).string();
    EXPECT_EQ(::mkfifo(path.c_str(), 0600), 0);
    return path;
  }
  std::string EmptyDir(const std::string& name) {
    std::filesystem::create_directories(dir_ / name);
    return (dir_ / name).string();
  }
  static std::string Record(const std::string& id, const std::string& norm_extra) {
    return R"({"id": ")" + id +
           R"(", "source": "s", "norm": {"mode": "inference", )"
           R"("model": "org/model")" +
           norm_extra + "}}\n";
  }
};

TEST_F(CliCalibrateTest, AFifoAsMeasurementsIsRefusedNotWaitedOn) {
  const std::string fifo = Fifo("measurements.jsonl");
  const Outcome o = Calibrate({"--measurements", fifo, "--configs", EmptyDir("configs")});
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("--measurements " + Clip(fifo) + ": not a regular file (a fifo)"),
            std::string::npos)
      << o.err;
}

TEST_F(CliCalibrateTest, AFifoAmongTheConfigsIsRefusedNotWaitedOn) {
  const std::string configs = EmptyDir("configs");
  Fifo("configs/org__model.config.json");
  const std::string measurements = Write("m.jsonl", Record("r1", R"(, "value_gib": 3.5)"));
  const Outcome o = Calibrate({"--measurements", measurements, "--configs", configs});
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("--configs " + Clip(configs) +
                       ": org__model.config.json: not a regular file (a fifo)"),
            std::string::npos)
      << o.err;
}

TEST_F(CliCalibrateTest, AFifoAsTheConfigsDirectoryIsRefused) {
  const std::string fifo = Fifo("configs");
  const std::string measurements = Write("m.jsonl", Record("r1", R"(, "value_gib": 3.5)"));
  const Outcome o = Calibrate({"--measurements", measurements, "--configs", fifo});
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("--configs " + Clip(fifo) + ": not a directory"), std::string::npos)
      << o.err;
}

TEST_F(CliCalibrateTest, OutOfRangeMeasuredValuesAreRefusedNamingTheRecordAndTheField) {
  struct Case {
    std::string norm_extra;
    std::string expect;
  };
  const Case cases[] = {
      {R"(, "value_gib": -5)", "norm.value_gib is -5, not a measured peak"},
      {R"(, "value_gib": 0)", "norm.value_gib is 0, not a measured peak"},
      {R"(, "value_gib": 1e12)",
       "norm.value_gib is 1e+12, not a measured peak (positive, "
       "finite, at most 100,000 GiB)"},
      {R"(, "value_gib": 3.5, "batch_size": -1)", "norm.batch_size is -1, outside 1..1,048,576"},
      {R"(, "value_gib": 3.5, "seq_len": 0)", "norm.seq_len is 0, outside 1..16,777,216"},
  };
  for (const Case& c : cases) {
    const std::string measurements =
        Write("m.jsonl", Record("fine", R"(, "value_gib": 3.5)") + Record("bad", c.norm_extra));
    const Outcome o = Calibrate({"--measurements", measurements, "--configs", EmptyDir("configs")});
    EXPECT_EQ(o.status, 2) << c.norm_extra << ": " << o.err;
    EXPECT_NE(o.err.find(Clip(measurements) + ":2: record \"bad\": " + c.expect), std::string::npos)
        << o.err;
  }
}

TEST_F(CliCalibrateTest, EveryPublishedRecordIsInRange) {
  const Outcome o = Calibrate({"--measurements", kFixtures + "/calibration/measured-memory.jsonl",
                               "--configs", kFixtures + "/models"},
                              120);
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.err, "");
}

}  // namespace
}  // namespace hubwatch::cli
