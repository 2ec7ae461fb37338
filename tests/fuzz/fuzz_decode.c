/* Target functions: accy__wire_decode, accy__verify, accy__wire_encode,
 * accy_text_disassemble, accy_text_assemble.
 *
 * tests/fuzz/fuzz_decode.c: untrusted bytes through the wire decoder and the
 * verifier. Properties checked on every input:
 *  - decode returns OK, INVALID_PROGRAM, UNSUPPORTED_VERSION or
 *    OUT_OF_MEMORY, and every failure has a cause;
 *  - a decoded program re-encodes, and the canonical bytes are a fixed point
 *    (decode(encode(p)) encodes to the same bytes) that verifies exactly as
 *    the original did;
 *  - a verified program disassembles, and its text assembles back to the
 *    canonical bytes at the lowest minor version that holds the program
 *    (docs/text-format.md: the round trip is exact but for the minor, which
 *    the assembler always writes as low as it can); those bytes differ from
 *    the canonical ones in the minor version field at most;
 *  - nothing allocated through accy stays allocated. */
#include "tests/fuzz/fuzz.h"

#include "src/base/alloc.h"
#include "src/ir/verify.h"
#include "src/wire/wire.h"

ACCY_FUZZ_NAME(fuzz_decode);

FUZZ_SANITIZER_OPTIONS()

/* dis(data) assembles back to |canon| (|canon_size| bytes). */
static void check_text_round_trip(const uint8_t *data, size_t size, const void *canon,
                                  size_t canon_size) {
  char *text = NULL;
  fuzz_clear_cause();
  accy_status s = accy_text_disassemble(data, size, &text);
  if (s == ACCY_STATUS_OUT_OF_MEMORY) return;
  FUZZ_CHECK(s == ACCY_STATUS_OK, "disassembling a verified program: %s", accy_status_name(s));
  void *again = NULL;
  size_t again_size = 0;
  s = accy_text_assemble(text, strlen(text), NULL, &again, &again_size);
  if (s != ACCY_STATUS_OUT_OF_MEMORY) {
    FUZZ_CHECK(s == ACCY_STATUS_OK, "assembling the disassembly: %s\n%s", accy_status_name(s),
               text);
    FUZZ_CHECK(again_size == canon_size && memcmp(again, canon, canon_size) == 0,
               "asm(dis(bytes)) differs from the lowest-minor canonical bytes (%zu vs %zu bytes)", again_size,
               canon_size);
  }
  accy_free(again);
  accy_free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int64_t live = accy__alloc_live();
  accy__program p;
  fuzz_clear_cause();
  accy_status s = accy__wire_decode(data, size, &p);
  FUZZ_CHECK(s == ACCY_STATUS_OK || s == ACCY_STATUS_INVALID_PROGRAM ||
                 s == ACCY_STATUS_UNSUPPORTED_VERSION || s == ACCY_STATUS_OUT_OF_MEMORY,
             "decode returned %s", accy_status_name(s));
  if (s != ACCY_STATUS_OK) {
    FUZZ_CHECK_CAUSE(s);
    FUZZ_CHECK(accy__alloc_live() == live, "a failed decode leaked %lld blocks",
               (long long)(accy__alloc_live() - live));
    return 0;
  }

  fuzz_clear_cause();
  accy_status verified = accy__verify(&p);
  FUZZ_CHECK(verified == ACCY_STATUS_OK || verified == ACCY_STATUS_INVALID_PROGRAM,
             "verify returned %s", accy_status_name(verified));
  if (verified != ACCY_STATUS_OK) FUZZ_CHECK_CAUSE(verified);

  void *canon = NULL;
  size_t canon_size = 0;
  s = accy__wire_encode(&p, &canon, &canon_size);
  if (s == ACCY_STATUS_OK) {
    accy__program q;
    s = accy__wire_decode(canon, canon_size, &q);
    FUZZ_CHECK(s == ACCY_STATUS_OK || s == ACCY_STATUS_OUT_OF_MEMORY,
               "the canonical encoding of a decoded program does not decode: %s",
               accy_status_name(s));
    if (s == ACCY_STATUS_OK) {
      FUZZ_CHECK(q.n_nodes == p.n_nodes && q.n_params == p.n_params &&
                     q.n_outputs == p.n_outputs,
                 "re-decoded program has %u nodes, %u parameters, %u outputs; expected %u, %u, %u",
                 q.n_nodes, q.n_params, q.n_outputs, p.n_nodes, p.n_params, p.n_outputs);
      accy_status v2 = accy__verify(&q);
      FUZZ_CHECK(v2 == verified, "the canonical bytes verify as %s, the original as %s",
                 accy_status_name(v2), accy_status_name(verified));
      void *again = NULL;
      size_t again_size = 0;
      s = accy__wire_encode(&q, &again, &again_size);
      FUZZ_CHECK(s == ACCY_STATUS_OK || s == ACCY_STATUS_OUT_OF_MEMORY,
                 "re-encoding the canonical program: %s", accy_status_name(s));
      if (s == ACCY_STATUS_OK)
        FUZZ_CHECK(again_size == canon_size && memcmp(again, canon, canon_size) == 0,
                   "encode(decode(canonical)) is not canonical (%zu vs %zu bytes)", again_size,
                   canon_size);
      accy__free(again);
      accy__program_free(&q);
    }
    if (verified == ACCY_STATUS_OK) {
      /* The same program at the lowest minor that holds it. */
      uint16_t declared = p.wire_minor;
      p.wire_minor = 0;
      void *lowest = NULL;
      size_t lowest_size = 0;
      s = accy__wire_encode(&p, &lowest, &lowest_size);
      p.wire_minor = declared;
      if (s == ACCY_STATUS_OK) {
        FUZZ_CHECK(lowest_size == canon_size && canon_size >= 8 &&
                       memcmp(lowest, canon, 6) == 0 &&
                       memcmp((const uint8_t *)lowest + 8, (const uint8_t *)canon + 8,
                              canon_size - 8) == 0,
                   "re-encoding at the lowest minor changed more than the minor");
        check_text_round_trip(data, size, lowest, lowest_size);
      } else {
        FUZZ_CHECK(s == ACCY_STATUS_OUT_OF_MEMORY, "encoding at the lowest minor: %s",
                   accy_status_name(s));
      }
      accy__free(lowest);
    }
  } else {
    /* Everything the decoder accepts, the encoder can hold. */
    FUZZ_CHECK(s == ACCY_STATUS_OUT_OF_MEMORY, "encoding a decoded program: %s",
               accy_status_name(s));
  }
  accy__free(canon);
  accy__program_free(&p);
  FUZZ_CHECK(accy__alloc_live() == live, "%lld blocks leaked",
             (long long)(accy__alloc_live() - live));
  return 0;
}
