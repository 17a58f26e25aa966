export interface WebhookReceiptsRepo {
  /**
   * Records each id not yet received from `provider` and returns those: they are the caller's to
   * apply. Run inside the transaction that applies them, so a receipt exists exactly when its
   * effects do; of two concurrent deliveries of one id, one gets it (the primary key decides).
   */
  claim(provider: string, ids: string[], now: number): Promise<Set<string>>;
}
