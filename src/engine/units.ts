// Units live in names and types: every quantity in the engine is one of these, never a bare "size" or "time".
//
// The three are branded numbers: a Micros is not assignable to Bytes, and a plain number is assignable to neither,
// so a duration cannot be passed where a size is expected. A branded value still is a number (it reads, compares
// and formats as one), and arithmetic on it gives a plain number, which becomes a unit again only through one of
// the constructors below. They are called where plain numbers enter: parsers, config readers, hardware tables, and
// the line that computes a quantity. The brand exists only for the typechecker; at run time nothing changes.

/** A byte count. */
export type Bytes = number & { readonly __unit: 'bytes' };
/** A duration or timestamp in microseconds. */
export type Micros = number & { readonly __unit: 'micros' };
/** A bandwidth in gigabytes per second, with 1 GB = 1e9 bytes as nccl-tests counts it. */
export type GBps = number & { readonly __unit: 'GBps' };

/** Declares a plain number a byte count. Named `as…` so that it never shadows the many locals called `bytes`. */
export function asBytes(value: number): Bytes {
  return value as Bytes;
}

/** Declares a plain number a duration or timestamp in microseconds. */
export function asMicros(value: number): Micros {
  return value as Micros;
}

/** Declares a plain number a bandwidth in GB/s (1 GB = 1e9 bytes). */
export function asGBps(value: number): GBps {
  return value as GBps;
}

const BINARY_SUFFIXES: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
  t: 1024 ** 4,
  tb: 1024 ** 4,
  tib: 1024 ** 4,
};

/**
 * Parses "8", "8MiB", "8M", "1.5G" into bytes. Like nccl-tests' -b/-e flags, K/M/G are binary multiples.
 * Returns undefined for anything that is not a non-negative size, so callers can report their own error.
 */
export function parseBytes(text: string): Bytes | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  if (!match) return undefined;
  const multiplier = BINARY_SUFFIXES[match[2].toLowerCase()];
  if (multiplier === undefined) return undefined;
  const value = Number(match[1]) * multiplier;
  return Number.isFinite(value) ? asBytes(Math.round(value)) : undefined;
}

/**
 * Formats bytes with a binary suffix, as people read bucket and message sizes: the one size formatter of the
 * project, so a column never shows "86.0 MiB" beside "86 MiB". Three significant digits at most, trailing zeros
 * dropped: 25 MiB, 1.5 GiB, 8.25 KiB, 86 MiB.
 */
export function formatBytes(bytes: Bytes): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value: number = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const digits = unit === 0 ? 0 : Math.abs(value) < 10 ? 2 : Math.abs(value) < 100 ? 1 : 0;
  return `${String(Number(value.toFixed(digits)))} ${units[unit]}`;
}

/** Formats a duration in the unit that keeps three significant digits readable. */
export function formatMicros(us: Micros): string {
  if (us >= 1e6) return `${(us / 1e6).toFixed(2)} s`;
  if (us >= 1e3) return `${(us / 1e3).toFixed(us >= 1e5 ? 0 : us >= 1e4 ? 1 : 2)} ms`;
  return `${us.toFixed(us >= 100 ? 0 : us >= 10 ? 1 : 2)} µs`;
}

/** algbw as nccl-tests defines it: the user buffer over the time, in GB/s. */
export function algbwGBps(bytes: Bytes, timeUs: Micros): GBps {
  return asGBps(timeUs > 0 ? bytes / (timeUs * 1e3) : 0);
}

/** busbw for AllReduce as nccl-tests defines it: algbw × 2(n−1)/n, whatever algorithm ran. */
export function allReduceBusbwGBps(bytes: Bytes, timeUs: Micros, ranks: number): GBps {
  return asGBps(ranks > 1 ? (algbwGBps(bytes, timeUs) * 2 * (ranks - 1)) / ranks : 0);
}
