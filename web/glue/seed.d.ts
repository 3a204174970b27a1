// Types of web/glue/seed.js.
export declare function randomSeed(): number;
