/** An agents module that fails as it is imported. */
throw new Error('broken at import');

export {};
