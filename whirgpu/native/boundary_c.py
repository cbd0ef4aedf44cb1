"""The C walk of a pruned Merkle multiproof's boundary (``ref/merkle_pruned``'s order), shared by the two compiled
libraries that prune: ``native/prune.py`` (digests out of gathered paths) and ``native/job_c.py`` (sibling ids for
a hiding proof's host-drawn positions). One macro, so each keeps its own types and output without a call per node.
"""

SOURCE = r"""
/* P2_BOUNDARY_WALK(INDEX, q, depth, EMIT): for q ascending leaf indices INDEX(r), r < q (repeats allowed), in a
   tree of 2^depth leaves, EMIT(r, l) for each boundary digest in proof order: level by level from the leaves, at
   level l the first rank r below each node whose sibling node holds no index (ascending node). */
#define P2_BOUNDARY_WALK(INDEX, q, depth, EMIT)                                                              \
    for (long l_ = 0; l_ < (long)(depth); l_++) {                                                          \
        for (long r_ = 0; r_ < (long)(q); r_++) {                                                          \
            const int64_t node_ = (int64_t)(INDEX(r_)) >> l_;                                              \
            if (r_ && ((int64_t)(INDEX(r_ - 1)) >> l_) == node_) continue; /* not the first below it */    \
            int queried_;                                                                                  \
            if (node_ & 1) {                                                                               \
                queried_ = r_ && ((int64_t)(INDEX(r_ - 1)) >> l_) == node_ - 1;                            \
            } else {                                                                                       \
                long j_ = r_ + 1;                                                                          \
                while (j_ < (long)(q) && ((int64_t)(INDEX(j_)) >> l_) == node_) j_++;                      \
                queried_ = j_ < (long)(q) && ((int64_t)(INDEX(j_)) >> l_) == node_ + 1;                    \
            }                                                                                              \
            if (!queried_) { EMIT(r_, l_); }                                                               \
        }                                                                                                  \
    }
"""
