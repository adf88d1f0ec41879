// Adasum ("adaptive summation", Maleki et al.), Horovod's op=hvd.Adasum:
// combines the ranks' tensors pairwise so that parallel components are
// averaged and orthogonal ones added,
//
//   adasum(a, b) = (1 - a.b / (2|a|^2)) a + (1 - a.b / (2|b|^2)) b
//
// (a coefficient is 1 where its |x|^2 < 1e-8, Horovod's guard), over a tree:
// ranks 2i and 2i+1 first, then pairs of pairs, up to the whole group, so
// the result is adasum(adasum(adasum(r0, r1), adasum(r2, r3)), ...).
//
// The algorithm is Horovod's vector-halving distance-doubling: at level L
// (1, 2, 4, ...) a rank and its partner rank^L split their current window in
// halves, each sends the other the half it gives up and combines the half it
// keeps with the partner's; the dot product and norms of a level's halves are
// summed across the 2L ranks that together hold the two vectors being
// combined, so each rank's coefficients are those of the whole vectors.
// Then the windows are gathered back in reverse order. Every element is
// computed by exactly one rank and copied to the others: all ranks end with
// the same bits.
//
// Each tensor of a fused operation (one FusedPart each) gets its own
// coefficients, as in Horovod: the halving cuts across tensors, and the
// per-tensor sums travel together in one small message per step.
//
// It needs only point-to-point messages (transport::Context), so it runs on
// any transport; shm::adasum_allreduce (collectives/shm) runs the same code
// through one host's shared memory (adasum_links.h), with the same bits.
// Horovod allows only a power-of-two number of ranks; so does this
// (InvalidArgument otherwise, before any message).
#pragma once

#include <vector>

#include "collectives/fused_part.h"
#include "kolo/types.h"
#include "transport/context.h"

namespace kolo::collectives {

// Whether Adasum can run on `size` ranks: a power of two (1 included).
bool adasum_size_supported(int size);

// The error text for a group of `size` ranks where Adasum cannot run, or "".
std::string adasum_size_problem(int size);

// Adasum over every rank of `ctx`: each part's input (null: zeros, as a
// joined rank contributes) times reduce.prescale, combined, times
// reduce.postscale, written to each part's output (null: discarded; may
// equal the input). reduce.op must be kAdasum and dtype floating (a bug
// otherwise: InternalError). All ranks pass the same counts.
void adasum_allreduce(transport::Context& ctx, transport::Tag tag,
                      const std::vector<FusedPart>& parts, DataType dtype, const Reduction& reduce);

}  // namespace kolo::collectives
