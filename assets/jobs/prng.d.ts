/** Types of prng.js (plain JS, so that the example jobs can import it as they run). */
export declare function prng(seed: number): () => number;
export declare function uniformIn(rand: () => number, scale: number): number;
export declare function uniformArray(rand: () => number, length: number, scale: number): Float32Array;
