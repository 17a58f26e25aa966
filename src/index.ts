export { createNotify, type CreateNotifyOptions, type Notify } from './notify.ts';
export { loadConfig, type Config, type ConfigInput, OPTION_NAMES, envName } from './config.ts';
export { NotifyError, ErrorCodes, type ErrorCode, isNotifyError } from './errors.ts';
export { manualClock, minutes, systemClock, type Clock } from './core/clock.ts';
export type { NotifyEventMap, NotifyEventName } from './core/events.ts';
export type { CampaignStats, Contact, ContactInput, ContactStatus, Enrollment, SendRecord } from './core/types.ts';
export type { CampaignReport, CampaignSummary, LinkStats, ReportOptions, SequenceSummary, TimelineBucket } from './core/stats.ts';
export { notify_form, notify_form_open, notify_flash, type NotifyFormOptions, type FlashSource, type FlashMessages, type ListChoice } from './forms.ts';
