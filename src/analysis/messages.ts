// The wording of findings. Every message states the effective factor on the learning rate: with the world size
// known (a setting or --world-size) it is a number, otherwise "N× (world size)".
import type { SizeClass } from './sizes';

export function ranks(worldSize: number | undefined): string {
  return worldSize ? `${worldSize} ranks` : 'N ranks (world size)';
}

/** "8×", "64×", "N× (world size)", "N²× (world size squared)". */
export function timesFactor(exponent: number, worldSize: number | undefined): string {
  if (worldSize) return `${worldSize ** exponent}×`;
  return exponent === 1
    ? 'N× (world size)'
    : `N${exponent === 2 ? '²' : `^${exponent}`}× (world size${exponent === 2 ? ' squared' : `^${exponent}`})`;
}

/** "1/8 of", "1/N (world size) of". */
export function fractionFactor(exponent: number, worldSize: number | undefined): string {
  const e = Math.abs(exponent);
  if (worldSize) return `1/${worldSize ** e} of`;
  return e === 1
    ? '1/N (world size) of'
    : `1/N${e === 2 ? '²' : `^${e}`} (world size${e === 2 ? ' squared' : `^${e}`}) of`;
}

export function sumMessage(exponent: number, worldSize: number | undefined): string {
  const body = worldSize
    ? `Gradients are the sum over ${worldSize} ranks`
    : 'Gradients are summed over N ranks and never divided by the world size';
  return `${body}: the effective learning rate is ${timesFactor(exponent, worldSize)} the configured one.`;
}

export function doubleMessage(exponent: number, worldSize: number | undefined, why: string): string {
  return `Gradients are averaged twice (${why}): the effective learning rate is ${fractionFactor(exponent, worldSize)} the configured one.`;
}

export function wrongDivisorMessage(
  size: SizeClass,
  divisorText: string,
  groupNote: string | undefined,
  worldSize: number | undefined,
): string {
  const n = worldSize ? String(worldSize) : 'N';
  let what: string;
  let factor: string;
  switch (size.kind) {
    case 'local':
      what = `the GPUs per node (\`${divisorText}\`)`;
      factor = worldSize
        ? `${n}/(GPUs per node)× (the number of nodes)`
        : 'N/k× (the number of nodes, with k GPUs per node)';
      break;
    case 'const':
      what = `the hard-coded ${divisorText}`;
      factor =
        worldSize && size.value
          ? `${+(worldSize / size.value).toPrecision(3)}×`
          : `N/${size.value ?? divisorText}× (world size / ${size.value ?? divisorText})`;
      break;
    case 'batch':
      what = `the batch size (\`${divisorText}\`)`;
      factor = `${n}/B× (world size / batch size)`;
      break;
    default:
      what = groupNote ?? `\`${divisorText}\``;
      factor = `${n}/M× (world size of the group that reduced / the size divided by)`;
  }
  const group = groupNote && size.kind !== 'world' ? ` ${groupNote}` : '';
  return `Gradients summed over ${ranks(worldSize)} are divided by ${what} instead of the world size of the group that reduced them${group}: the effective learning rate is ${factor} the configured one.`;
}

/**
 * The evidence of a sum in one sentence: what was summed, by which call, over which group, and where the update
 * reads it. `tensor` and `call` are source text; `group` is how the analysis named the group.
 */
export function sumEvidence(
  tensor: string,
  call: string,
  group: string | undefined,
  update: string | undefined,
  via?: {
    readonly path: string;
    readonly range: { readonly startLine: number };
    readonly shape: 'parameters' | 'tensors';
  },
): string {
  const over =
    group === undefined || group === 'the default group' || group === 'None'
      ? 'all ranks (the default group)'
      : group.startsWith('all ')
        ? group
        : `the data-parallel group \`${group}\``;
  const reaches = update ? `, and ${update}` : '';
  if (via) {
    const what =
      via.shape === 'parameters' ? `the gradients of \`${clip(tensor)}\`'s parameters` : `\`${clip(tensor)}\``;
    return `\`${clip(call)}\` (${via.path}:${via.range.startLine + 1}) sums ${what} over ${over}; no division by that group's size follows${reaches}.`;
  }
  return `\`${clip(call)}\` sums \`${clip(tensor)}\` over ${over}; no division by that group's size follows${reaches}.`;
}

/** Source text shortened for a one-line message. */
export function clip(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
