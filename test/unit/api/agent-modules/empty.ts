/** An agents module that exports no agent. */
export const answer = 42;
