// What one channel of a ring moves per step, as its kernel spends time on it. LL and LL128 work in whole trips of
// the CTA: an LL thread moves one 16-byte line (8 data bytes) per loop iteration (prims_ll.h, offset += nthreads),
// an LL128 warp one 2 KiB slice of 1,920 data bytes, the warps taking slices in turn (prims_ll128.h GenericOp,
// `nelem -= DataEltPerSlice*nwarps`), and a step ends at a CTA barrier. A step that fills a trip only partly takes
// the trip's time: each iteration waits on the same flag round trip, whatever share of the threads carry data.
import * as K from '../constants';
import type { BuildContext } from './context';

/** Most threads per CTA (device.h): NCCL_LL_MAX_NTHREADS 512, NCCL_LL128_MAX_NTHREADS 640. */
const MAX_THREADS = { LL: 512, LL128: 640 } as const;
const WARP = 32;
/** Data bytes one LL thread moves per iteration: half of a 16-byte line. */
const LL_BYTES_PER_THREAD = 8;
/** Data bytes one LL128 warp moves per iteration: 32 threads × 8 words × 8 B, 15 of every 16 words data. */
const LL128_BYTES_PER_WARP = (WARP * 8 * 8 * 15) / 16;

/** Threads per CTA after NCCL's reduction for small messages (enqueue.cc topoGetAlgoInfo). */
function threadsPerChannel(ctx: BuildContext, protocol: 'LL' | 'LL128'): number {
  let threshold = K.CHANNEL_THRESHOLD_BYTES[protocol];
  if (protocol === 'LL') threshold *= ctx.system.ranks;
  let threads: number = MAX_THREADS[protocol];
  while (ctx.bytes < ctx.channels * threads * threshold && threads % 128 === 0) threads /= 2;
  return Math.max(threads, 3 * WARP);
}

/** Data bytes one CTA moves in one loop iteration of the protocol (a "trip"); Simple copies whole slices: 0. */
export function tripBytes(ctx: BuildContext): number {
  const protocol = ctx.protocol;
  if (protocol === 'Simple') return 0;
  const threads = threadsPerChannel(ctx, protocol);
  return protocol === 'LL' ? threads * LL_BYTES_PER_THREAD : (threads / WARP) * LL128_BYTES_PER_WARP;
}

/**
 * Bytes one channel is charged per ring step: its share of the buffer (bytes / ranks / channels), rounded up to
 * whole trips for LL and LL128. On 8 ranks × 24 channels LL128 at 4 MiB has 21,845 B per step, one 38,400 B trip.
 */
export function ringStepPayloadBytes(ctx: BuildContext): number {
  const even = ctx.bytes / ctx.system.ranks / ctx.channels;
  const trip = tripBytes(ctx);
  if (trip === 0 || ctx.system.fabric.idealised) return even;
  return Math.ceil(even / trip) * trip;
}
