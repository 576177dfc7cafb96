// Generates a Chrome Trace Event file the way a GPU profiler export looks (Kineto, a Perfetto JSON): one process
// per node and one thread per rank, each rank alternating GEMM kernels with NCCL AllReduce kernels, plus the
// process_name/thread_name metadata events. The host-memory benchmark opens it through the extension's Open Trace.
import { closeSync, openSync, writeSync } from 'node:fs';

const GPUS_PER_NODE = 8;
/** Kernel names and categories as PyTorch's profiler writes them; every fourth span is a collective. */
const KERNELS: readonly { name: string; cat: string; bytes?: number }[] = [
  { name: 'ampere_fp16_s16816gemm_fp16_256x128_ldg8_f2f_stages_64x3_tn', cat: 'kernel' },
  { name: 'void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::Half>>', cat: 'kernel' },
  { name: 'aten::linear', cat: 'cpu_op' },
  { name: 'ncclDevKernel_AllReduce_Sum_f16_RING_LL', cat: 'kernel', bytes: 26214400 },
];

/**
 * Writes `spans` complete events over `lanes` ranks to `path`, in time order across lanes (as a profiler flushes
 * them), in slices so the generator never holds the whole text. Returns the file's size in bytes.
 */
export function writeChromeTrace(path: string, spans: number, lanes: number): number {
  const fd = openSync(path, 'w');
  let written = 0;
  const write = (text: string): void => {
    written += writeSync(fd, text);
  };
  try {
    write('{"displayTimeUnit":"ms","traceEvents":[\n');
    for (let rank = 0; rank < lanes; rank++) {
      const pid = Math.floor(rank / GPUS_PER_NODE);
      if (rank % GPUS_PER_NODE === 0)
        write(`{"ph":"M","name":"process_name","pid":${pid},"tid":0,"args":{"name":"node ${pid}"}},\n`);
      write(`{"ph":"M","name":"thread_name","pid":${pid},"tid":${rank},"args":{"name":"rank ${rank} stream 7"}},\n`);
    }
    // A small deterministic generator keeps files identical between runs, so reruns reuse the cached file.
    let seed = 12345;
    const random = (): number => (seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296;
    // Kineto writes microseconds from the GPU clock's epoch, numbers of this size with three decimals.
    const origin = 4_458_677_007_811;
    const parts: string[] = [];
    for (let i = 0; i < spans; i++) {
      const rank = i % lanes;
      const k = Math.floor(i / lanes);
      const kernel = KERNELS[(k + rank) % KERNELS.length];
      const ts = (origin + k * 10 + rank * 0.37 + random()).toFixed(3);
      const dur = (2 + random() * 6).toFixed(3);
      const args = kernel.bytes === undefined ? `{"correlation":${i}}` : `{"correlation":${i},"bytes":${kernel.bytes}}`;
      parts.push(
        `{"ph":"X","cat":"${kernel.cat}","name":"${kernel.name}","pid":${Math.floor(rank / GPUS_PER_NODE)},"tid":${rank},"ts":${ts},"dur":${dur},"args":${args}}`,
      );
      if (parts.length === 10_000 || i === spans - 1) {
        write(parts.join(',\n') + (i === spans - 1 ? '\n' : ',\n'));
        parts.length = 0;
      }
    }
    write(']}\n');
  } finally {
    closeSync(fd);
  }
  return written;
}
