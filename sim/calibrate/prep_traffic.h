/* prep_traffic: the memory traffic of calibrate's image_train pipeline per
 * item, for the profile's prep.mem_mb_per_item (with server.mem_gbps, the
 * bound on prep cores past prep.scaling's last point).
 *
 * A count of the pipeline's buffer traffic from the buffers' actual sizes,
 * not a hardware counter: per item, the encoded JPEG the decoder reads, the
 * RGB image TurboJPEG writes (3 x w x h bytes), the rows of it that
 * augment_cpu samples for its random-resized crop (each sampled row across
 * the crop's sampled columns, as whole row spans), and the normalised CHW
 * float output it writes (3 x 224 x 224 x 4 bytes). Left out: the libraries'
 * own working buffers (libjpeg's coefficient and row buffers), the file's
 * copy from the page cache (the read, not prep) and the write-allocate read
 * of each written line, so the DRAM traffic is likely larger; a buffer that
 * stays in a core's cache does not reach DRAM at all, so it may also be
 * smaller. Counted over every item of the set, one crop each (drawn as
 * augment_bench draws them, seeded), 1 MB = 1e6 bytes.
 *
 * Use: prep_traffic t; prep_traffic_count(&set, seed, &t); t.mb_per_item.
 */
#ifndef STALLSIM_PREP_TRAFFIC_H
#define STALLSIM_PREP_TRAFFIC_H

#include "decode_bench.h"

typedef struct {
    int items;
    /* Means per item, MB: read by decode, written by decode, read by the
     * augment, written by the augment; and their sum. */
    double jpeg_read_mb, rgb_write_mb, crop_read_mb, out_write_mb;
    double mb_per_item;
} prep_traffic;

/* 0, or -1 when the set is empty or memory is short. */
int prep_traffic_count(const jpeg_set *set, unsigned long seed, prep_traffic *out);

#endif
