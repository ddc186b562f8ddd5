// SPDX-License-Identifier: Apache-2.0
// etrace-dump: prints the te_inst packets of a file of encapsulated RISC-V E-Trace packets,
// as text or JSON Lines (one object per packet or error).
//
//   etrace-dump FILE [parameter options] [encapsulation options] [--json]
//   etrace-dump [options]          a demonstration trace made by the encoder
//
// The input is read and decoded in 64 KiB chunks, so memory stays bounded whatever its length:
// an endless input (a device, a pipe) decodes until it ends, like cat.
//
// Exit status: 0 on success (decode errors in the trace are printed, not fatal), 1 on I/O
// errors (reading the input or writing the output), 2 on usage errors or invalid parameters.

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include <tracecodec/etrace/config.hpp>
#include <tracecodec/etrace/encapsulation.hpp>
#include <tracecodec/etrace/encoder.hpp>
#include <tracecodec/host/etrace/format.hpp>
#include <tracecodec/etrace/stream_decoder.hpp>

namespace et = tracecodec::etrace;

#include "cli.hpp"

namespace {

using namespace tools;  // exit codes, put_line

const char* const usage_text =
    "usage: etrace-dump [FILE|-] [options] [--json]\n"
    "\n"
    "Prints every te_inst packet and every decode error of a file of encapsulated RISC-V\n"
    "E-Trace instruction trace packets. Without FILE, encodes a demonstration trace for the\n"
    "given parameters and decodes it. Numbers are decimal or 0x hex.\n"
    "\n"
    "te_inst parameters [default]:\n"
    "  --iaddress-width N [32]      --iaddress-lsb N [1]        --privilege-width N [2]\n"
    "  --ecause-width N [6]         --context-width N [0]       --time-width N [0]\n"
    "  --notime 0|1 [1, 0 if --time-width is given]\n"
    "  --nocontext 0|1 [1, 0 if --context-width is given]\n"
    "  --return-stack-size N [0]    --call-counter-size N [0]   --cache-size N [0]\n"
    "  --f0s-width N [0]            --branch-prediction 0|1 [0] --jump-target-cache 0|1 [0]\n"
    "  --encoder-mode-width N [1]   --ioptions-width N [5]      --doptions-width N [4]\n"
    "  --implicit-exception-ioption N|none [1]   ioptions bit of implicit exception mode\n"
    "  --implicit-exception 0|1 [0]              mode before the first support packet\n"
    "encapsulation [default]:\n"
    "  --transport siemens|atb [siemens]         --index-width N [0] (siemens)\n"
    "  --recovery none|zero-run|blocks [none]    --zero-run-log2 N [5]   --block-size M [1024]\n"
    "  --unsynchronized             the file does not begin at a packet boundary\n"
    "output:\n"
    "  --json                       JSON Lines: one object per packet, error or run of\n"
    "                               skipped bytes\n"
    "  --help                       this text\n"
    "\n"
    "The input is decoded in 64 KiB chunks as it is read: an endless FILE decodes until it\n"
    "ends. Exit status: 0 success (decode errors are printed), 1 I/O error (input or\n"
    "output), 2 usage error or invalid parameters.\n";


int usage_error(const std::string& message) { return tools::usage_error("etrace-dump", message, usage_text); }

bool parse_number(std::string_view s, std::uint64_t& out) {
  if (s.empty()) return false;
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  std::uint64_t v = 0;
  for (const char c : s) {
    unsigned d;
    if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
    else if (base == 16 && c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
    else if (base == 16 && c >= 'A' && c <= 'F') d = static_cast<unsigned>(c - 'A' + 10);
    else return false;
    if (d >= static_cast<unsigned>(base) || v > (~std::uint64_t{0} - d) / static_cast<unsigned>(base))
      return false;
    v = v * static_cast<unsigned>(base) + d;
  }
  out = v;
  return true;
}

int finish_output(int status) { return tools::finish_output("etrace-dump", status); }

// JSON Lines: bytes the decoder skipped while it looked for a packet boundary (a recovery
// scheme, after an error or with --unsynchronized) appear in no packet or error object, so
// they get their own: {"offset":O,"skipped":N,"reason":"unsynchronized"|"recovery"}. The
// decoder counts them in stats().bytes_skipped, with the bytes of failed packets (which the
// error object's length covers). Between two objects they form one run: the decoder is out
// of step from the end of the last object (or offset 0) until the first byte it resumes at.
class skip_reporter {
 public:
  explicit skip_reporter(bool unsynchronized_start) : unsynchronized_(unsynchronized_start) {}

  // Before printing a packet or error, and at the end: the run skipped since the last one,
  // given the decoder's bytes_skipped without the bytes of that packet or error.
  void flush(std::uint64_t bytes_skipped) {
    const std::uint64_t skipped = bytes_skipped - counted_;
    if (skipped == 0) return;
    counted_ = bytes_skipped;
    put_line("{\"offset\":" + std::to_string(resume_) + ",\"skipped\":" + std::to_string(skipped) +
             ",\"reason\":\"" + (unsynchronized_ ? "unsynchronized" : "recovery") + "\"}");
  }
  // After a packet or error object: where the decoder goes on, and what it has counted.
  void packet(const et::packet& p, const et::decoder_stats& st) {
    done(p.offset + p.size, st.bytes_skipped);
  }
  void error(const et::diagnostic& d, const et::decoder_stats& st) {
    done(d.offset + d.length, st.bytes_skipped);
  }

 private:
  void done(std::uint64_t end, std::uint64_t counted) {
    resume_ = end;
    counted_ = counted;
    unsynchronized_ = false;
  }
  bool unsynchronized_;
  std::uint64_t resume_ = 0;   // offset after the last object
  std::uint64_t counted_ = 0;  // bytes_skipped accounted for so far
};

// A short trace of every layout the parameters enable, made by the encoder.
std::vector<std::uint8_t> demonstration(const et::runtime_config& cfg, const et::encapsulation& enc,
                                        et::trace_mode mode) {
  et::encoder<> e(cfg, enc, mode);
  const et::field_widths& w = cfg.widths();
  std::vector<et::te_inst> packets;
  et::te_inst p{};
  p.format = et::format::sync;
  p.subformat = 3;  // support: trace enabled
  p.ienable = true;
  packets.push_back(p);
  p = {};
  p.format = et::format::sync;
  p.subformat = 0;  // start
  p.branch = true;
  p.privilege = 3 & static_cast<std::uint8_t>(et::low_bits(w.privilege));
  p.address = 0x80000000u & et::low_bits(w.iaddress_width) & ~et::low_bits(w.iaddress_lsb);
  packets.push_back(p);
  p = {};
  p.format = et::format::diff_delta;
  p.branches = 5;
  p.branch_map = 0x1b;
  p.address = 0x40;
  packets.push_back(p);
  p = {};
  p.format = et::format::addr_only;
  p.address = (~std::uint64_t{0} << 4) & et::low_bits(w.iaddress_width);  // -16
  p.updiscon = true;
  packets.push_back(p);
  p = {};
  p.format = et::format::sync;
  p.subformat = 1;  // trap: an exception with its trap value
  p.branch = true;
  p.privilege = 3 & static_cast<std::uint8_t>(et::low_bits(w.privilege));
  p.ecause = 2;
  p.thaddr = true;
  p.address = 0x80000100u & et::low_bits(w.iaddress_width) & ~et::low_bits(w.iaddress_lsb);
  p.tval = 0x13;
  packets.push_back(p);
  p = {};
  p.format = et::format::diff_delta;  // full branch map, no address
  p.branch_map = 0x7fff0000;
  packets.push_back(p);
  if (w.branch_prediction) {
    p = {};
    p.format = et::format::opt_ext;
    p.subformat = 0;
    p.branch_count = 100;
    packets.push_back(p);
  }
  if (w.jump_target_cache) {
    p = {};
    p.format = et::format::opt_ext;
    p.subformat = 1;
    p.index = 1 & static_cast<std::uint32_t>(et::low_bits(w.index));
    p.branches = 2;
    p.branch_map = 0x2;
    packets.push_back(p);
  }
  p = {};
  p.format = et::format::sync;
  p.subformat = 3;  // support: tracing ended
  p.qual_status = et::qual_status::ended_rep;
  packets.push_back(p);

  std::vector<std::uint8_t> out;
  std::uint8_t buf[et::max_packet_size + 4096];
  for (const et::te_inst& q : packets) {
    et::header h{};
    h.has_timestamp = true;
    h.timestamp = static_cast<std::uint16_t>(0x100 + out.size());
    const et::encode_result r = e.encode(q, h, buf, sizeof buf);
    if (r.error == et::error_code::ok) out.insert(out.end(), buf, buf + r.size);
  }
  const et::encode_result pad = e.pad_block(buf, sizeof buf);
  out.insert(out.end(), buf, buf + pad.size);
  return out;
}

}  // namespace

static int run_main(int argc, char** argv) {
  et::parameters prm{};
  et::encapsulation enc{};
  et::decoder_options opt{};
  bool json = false, have_file = false, notime_given = false, nocontext_given = false;
  std::string file;

  struct numeric_option {
    const char* name;
    std::uint8_t* target;
    std::uint64_t max;
  };
  const numeric_option numeric[] = {
      {"--iaddress-width", &prm.iaddress_width_p, 255},
      {"--iaddress-lsb", &prm.iaddress_lsb_p, 255},
      {"--privilege-width", &prm.privilege_width_p, 255},
      {"--ecause-width", &prm.ecause_width_p, 255},
      {"--context-width", &prm.context_width_p, 255},
      {"--time-width", &prm.time_width_p, 255},
      {"--return-stack-size", &prm.return_stack_size_p, 255},
      {"--call-counter-size", &prm.call_counter_size_p, 255},
      {"--cache-size", &prm.cache_size_p, 255},
      {"--f0s-width", &prm.f0s_width_p, 255},
      {"--encoder-mode-width", &prm.encoder_mode_width, 255},
      {"--ioptions-width", &prm.ioptions_width, 255},
      {"--doptions-width", &prm.doptions_width, 255},
      {"--index-width", &enc.index_width, 255},
      {"--zero-run-log2", &enc.zero_run_log2, 255},
  };
  struct flag_option {
    const char* name;
    bool* target;
  };
  const flag_option flags[] = {
      {"--notime", &prm.notime_p},
      {"--nocontext", &prm.nocontext_p},
      {"--branch-prediction", &prm.branch_prediction},
      {"--jump-target-cache", &prm.jump_target_cache},
      {"--implicit-exception", &opt.mode.implicit_exception},
  };

  // Every option that takes a value, so that an unknown option is reported as unknown.
  auto takes_value = [&](std::string_view name) {
    for (const numeric_option& o : numeric)
      if (name == o.name) return true;
    for (const flag_option& o : flags)
      if (name == o.name) return true;
    return name == "--implicit-exception-ioption" || name == "--transport" ||
           name == "--recovery" || name == "--block-size";
  };
  std::vector<std::string_view> given;  // value options seen: one of each
  bool index_width_given = false;

  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(usage_text, stdout);
      return finish_output(exit_ok);
    }
    if (arg == "--json") {
      json = true;
      continue;
    }
    if (arg == "--unsynchronized") {
      opt.synchronized_at_start = false;
      continue;
    }
    if (arg.size() > 1 && arg[0] == '-' && arg != "-") {
      if (!takes_value(arg)) return usage_error("unknown option " + std::string(arg));
      if (i + 1 >= argc) return usage_error(std::string(arg) + " needs a value");
      for (const std::string_view g : given)
        if (g == arg) return usage_error(std::string(arg) + " given twice");  // not the last one silently
      given.push_back(arg);
      const std::string_view value = argv[++i];
      for (const numeric_option& o : numeric) {
        if (arg != o.name) continue;
        std::uint64_t v = 0;
        if (!parse_number(value, v) || v > o.max)
          return usage_error(std::string(arg) + ": not a number 0..255: " + std::string(value));
        *o.target = static_cast<std::uint8_t>(v);
        if (arg == "--time-width" && !notime_given) prm.notime_p = false;
        if (arg == "--context-width" && !nocontext_given) prm.nocontext_p = false;
        if (arg == "--index-width") index_width_given = v != 0;
      }
      for (const flag_option& o : flags) {
        if (arg != o.name) continue;
        if (value != "0" && value != "1") return usage_error(std::string(arg) + " takes 0 or 1");
        *o.target = value == "1";
        if (arg == "--notime") notime_given = true;
        if (arg == "--nocontext") nocontext_given = true;
      }
      if (arg == "--implicit-exception-ioption") {
        std::uint64_t v = 0;
        if (value == "none") prm.implicit_exception_ioption = et::no_ioption;
        else if (parse_number(value, v) && v < 64) prm.implicit_exception_ioption = static_cast<std::uint8_t>(v);
        else return usage_error("--implicit-exception-ioption takes a bit number or none");
      } else if (arg == "--transport") {
        if (value == "siemens") enc.transport = et::transport::siemens;
        else if (value == "atb") enc.transport = et::transport::atb;
        else return usage_error("--transport takes siemens or atb");
      } else if (arg == "--recovery") {
        if (value == "none") enc.recovery = et::boundary_recovery::none;
        else if (value == "zero-run") enc.recovery = et::boundary_recovery::zero_run;
        else if (value == "blocks") enc.recovery = et::boundary_recovery::blocks;
        else return usage_error("--recovery takes none, zero-run or blocks");
      } else if (arg == "--block-size") {
        std::uint64_t v = 0;
        if (!parse_number(value, v) || v == 0 || v > 0xffffffffu) return usage_error("--block-size takes 1..2^32-1");
        enc.block_size = static_cast<std::uint32_t>(v);
      }
      continue;
    }
    if (have_file) return usage_error("more than one trace file given (" + std::string(arg) + ")");
    have_file = true;
    file = std::string(arg);
  }
  // The ATB-style header has no index field (encapsulation.hpp: index bytes only for Siemens):
  // an index width would be ignored without a word.
  if (index_width_given && enc.transport == et::transport::atb)
    return usage_error("--index-width applies to the Siemens transport only (the ATB header has no index field)");

  const et::runtime_config cfg(prm);
  if (cfg.status() != et::error_code::ok) {
    std::fprintf(stderr, "etrace-dump: invalid te_inst parameters (%s)\n",
                 et::parameter_error_name(cfg.reason()));
    return exit_usage;
  }
  if (et::validate(enc, cfg.max_payload()) != et::error_code::ok) {
    std::fprintf(stderr,
                 "etrace-dump: invalid encapsulation: a zero run of 2^N bytes must exceed the "
                 "longest packet after its header (%u bytes), a block must hold the longest "
                 "packet (%u bytes), index width at most 32\n",
                 enc.header_size(true) - 1 + cfg.max_payload(), enc.header_size(true) + cfg.max_payload());
    return exit_usage;
  }

  // The input: the demonstration trace in memory, or the file read a chunk at a time.
  std::vector<std::uint8_t> demo;
  std::FILE* f = nullptr;
  if (!have_file) {
    demo = demonstration(cfg, enc, opt.mode);
  } else {
    errno = 0;
    f = file == "-" ? stdin : std::fopen(file.c_str(), "rb");
    if (f == nullptr) {
      std::fprintf(stderr, "etrace-dump: cannot open %s: %s\n", file.c_str(), std::strerror(errno));
      return exit_io;
    }
  }
  constexpr std::size_t chunk = 65536;
  std::vector<std::uint8_t> buf(have_file ? chunk : 0);
  std::size_t fed = 0;  // demonstration bytes fed so far
  // The next chunk into the decoder, or finish() at the end of the input. False on a read error.
  auto feed_next = [&](et::stream_decoder<>& dec) -> bool {
    if (!have_file) {
      const std::size_t n = demo.size() - fed < chunk ? demo.size() - fed : chunk;
      dec.feed(demo.data() + fed, n);
      fed += n;
      if (fed == demo.size()) dec.finish();
      return true;
    }
    errno = 0;
    const std::size_t n = std::fread(buf.data(), 1, buf.size(), f);
    if (n == 0) {
      if (std::ferror(f)) return false;
      dec.finish();
      return true;
    }
    dec.feed(buf.data(), n);
    return true;
  };

  et::stream_decoder<> dec(cfg, enc, opt);
  skip_reporter skips(!opt.synchronized_at_start);
  et::packet p{};
  int status = exit_ok;
  for (;;) {
    const et::decode_status s = dec.next(p);
    if (s == et::decode_status::packet) {
      if (json) {
        skips.flush(dec.stats().bytes_skipped);
        skips.packet(p, dec.stats());
      }
      put_line(json ? et::format_json(p, cfg.widths(), enc) : et::format_text(p, cfg.widths(), enc));
    } else if (s == et::decode_status::error) {
      const et::diagnostic& d = dec.last_diagnostic();
      if (json) {  // the error's own bytes are its length; those before it were skipped
        skips.flush(dec.stats().bytes_skipped - d.length);
        skips.error(d, dec.stats());
      }
      put_line(json ? et::format_json(d) : et::format_text(d));
    } else if (s == et::decode_status::need_input) {
      // A write error (a full disk, say) ends the decode: an endless input never would.
      if (std::ferror(stdout)) break;
      if (!feed_next(dec)) {
        const int e = errno;
        std::fflush(stdout);
        std::fprintf(stderr, "etrace-dump: cannot read %s: %s\n", file.c_str(),
                     e != 0 ? std::strerror(e) : "read error");
        status = exit_io;
        break;
      }
    } else {
      break;
    }
  }
  if (f != nullptr && f != stdin) std::fclose(f);
  if (status == exit_ok) {
    if (json) {
      skips.flush(dec.stats().bytes_skipped);
    } else {
      const et::decoder_stats& st = dec.stats();
      char line[200];
      std::snprintf(line, sizeof line, "# %llu packets, %llu errors, %llu bytes skipped, %llu idle bytes",
                    static_cast<unsigned long long>(st.packets), static_cast<unsigned long long>(st.errors),
                    static_cast<unsigned long long>(st.bytes_skipped),
                    static_cast<unsigned long long>(st.idle_bytes));
      put_line(line);
    }
  }
  return finish_output(status);
}

int main(int argc, char** argv) {
  try {
    return run_main(argc, argv);
  } catch (const std::bad_alloc&) {  // fail with a message, never abort
    std::fflush(stdout);
    std::fputs("etrace-dump: out of memory\n", stderr);
    return exit_io;
  }
}
