import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * The arithmetic of the vector index: unit vectors, their int8 encoding, dot products and spherical k-means.
 * Pure functions over typed arrays; the SQL is in vectors.ts.
 */

/** The vector scaled to unit length (a zero vector stays zero). */
export function unit(values: ArrayLike<number>): Float32Array {
  const vector = Float32Array.from(values);
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
  return vector;
}

/**
 * A unit vector as stored: its scale (float32, little-endian) and then one signed byte per dimension, the
 * largest component at ±127. A quarter of float32's size; the dot product keeps about two decimal places.
 */
export function encodeVector(vector: Float32Array): Buffer {
  let largest = 0;
  for (const value of vector) largest = Math.max(largest, Math.abs(value));
  const scale = largest > 0 ? 127 / largest : 1;
  const bytes = Buffer.alloc(4 + vector.length);
  bytes.writeFloatLE(scale, 0);
  for (let i = 0; i < vector.length; i++) bytes.writeInt8(Math.round(vector[i]! * scale), 4 + i);
  return bytes;
}

/** The dimensions of an encoded vector. */
export const encodedDimensions = (bytes: Uint8Array): number => bytes.length - 4;

/** The dot product of a float query with an encoded vector (the cosine similarity when both are unit vectors). */
export function dotEncoded(query: Float32Array, bytes: Uint8Array): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const scale = view.getFloat32(0, true);
  const values = new Int8Array(bytes.buffer, bytes.byteOffset + 4, bytes.byteLength - 4);
  const length = Math.min(query.length, values.length);
  let sum = 0;
  for (let i = 0; i < length; i++) sum += query[i]! * values[i]!;
  return sum / scale;
}

/** An encoded vector decoded back to floats (for training). */
export function decodeVector(bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const scale = view.getFloat32(0, true);
  const values = new Int8Array(bytes.buffer, bytes.byteOffset + 4, bytes.byteLength - 4);
  return Float32Array.from(values, (value) => value / scale);
}

/** Float32 values as bytes (centroids) and back. */
export const floatsToBytes = (vector: Float32Array): Buffer => Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
export const bytesToFloats = (bytes: Uint8Array): Float32Array => new Float32Array(Uint8Array.from(bytes).buffer);

export function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

/** The index of the centroid nearest to the vector (largest dot product). */
export function nearestCentroid(centroids: readonly Float32Array[], vector: Float32Array): number {
  let best = 0;
  let bestScore = -Infinity;
  for (let i = 0; i < centroids.length; i++) {
    const score = dot(centroids[i]!, vector);
    if (score > bestScore) [best, bestScore] = [i, score];
  }
  return best;
}

/** The indexes of the `count` centroids nearest to the vector, nearest first. */
export function nearestCentroids(centroids: readonly Float32Array[], vector: Float32Array, count: number): number[] {
  return centroids.map((centroid, index) => ({ index, score: dot(centroid, vector) }))
    .sort((a, b) => b.score - a.score)
    .slice(0, count)
    .map((entry) => entry.index);
}

/**
 * Spherical k-means (Lloyd's iterations over unit vectors): `k` unit centroids that the samples cluster
 * around, yielding to other work as it goes. Deterministic: the first centroids are samples spread evenly through the list; an emptied
 * cluster keeps its centroid.
 */
export async function kMeans(samples: readonly Float32Array[], k: number, iterations = 8): Promise<Float32Array[]> {
  const count = Math.min(k, samples.length);
  if (count === 0) return [];
  const dimensions = samples[0]!.length;
  let centroids: Float32Array[] = Array.from({ length: count }, (_, i) => Float32Array.from(samples[Math.floor((i * samples.length) / count)]!));
  for (let round = 0; round < iterations; round++) {
    const sums = Array.from({ length: count }, () => new Float32Array(dimensions));
    const sizes = new Array<number>(count).fill(0);
    for (const [index, sample] of samples.entries()) {
      // Other work (replies) runs between slices: a round over thousands of samples takes a while.
      if (index % 256 === 255) await nextTurn();
      const cell = nearestCentroid(centroids, sample);
      const sum = sums[cell]!;
      for (let i = 0; i < dimensions; i++) sum[i]! += sample[i]!;
      sizes[cell]!++;
    }
    centroids = sums.map((sum, cell) => (sizes[cell] === 0 ? centroids[cell]! : unit(sum)));
  }
  return centroids;
}
