// The providers' own documented example payloads for a hard bounce and a spam complaint, as their
// documentation shows them; only the recipient's address (and, for SendGrid, the placeholder event
// id) is put in by the test, so each event lands on a contact of the run.

/**
 * Amazon SES, "Bounce notification with a DSN" (the mail object's optional headers, headersTruncated
 * and commonHeaders left out, as for a notification not configured to include the original headers).
 * Source: https://docs.aws.amazon.com/ses/latest/dg/notification-examples.html
 */
export function sesBounce(email: string): Record<string, unknown> {
  return {
    notificationType: 'Bounce',
    bounce: {
      bounceType: 'Permanent',
      reportingMTA: 'dns; email.example.com',
      bouncedRecipients: [{ emailAddress: email, status: '5.1.1', action: 'failed', diagnosticCode: `smtp; 550 5.1.1 <${email}>... User` }],
      bounceSubType: 'General',
      timestamp: '2016-01-27T14:59:38.237Z',
      feedbackId: '00000138111222aa-33322211-cccc-cccc-cccc-ddddaaaa068a-000000',
      remoteMtaIp: '127.0.2.0',
    },
    mail: {
      timestamp: '2016-01-27T14:59:38.237Z',
      source: 'john@example.com',
      sourceArn: 'arn:aws:ses:us-east-1:888888888888:identity/example.com',
      sourceIp: '127.0.3.0',
      sendingAccountId: '123456789012',
      callerIdentity: 'IAM_user_or_role_name',
      messageId: '00000138111222aa-33322211-cccc-cccc-cccc-ddddaaaa0680-000000',
      destination: [email, 'mary@example.com', 'richard@example.com'],
    },
  };
}

/**
 * Amazon SES, "Complaint notification with a feedback report" (mail headers left out as above).
 * Source: https://docs.aws.amazon.com/ses/latest/dg/notification-examples.html
 */
export function sesComplaint(email: string): Record<string, unknown> {
  return {
    notificationType: 'Complaint',
    complaint: {
      userAgent: 'AnyCompany Feedback Loop (V0.01)',
      complainedRecipients: [{ emailAddress: email }],
      complaintFeedbackType: 'abuse',
      arrivalDate: '2016-01-27T14:59:38.237Z',
      timestamp: '2016-01-27T14:59:38.237Z',
      feedbackId: '000001378603177f-18c07c78-fa81-4a58-9dd1-fedc3cb8f49a-000000',
    },
    mail: {
      timestamp: '2016-01-27T14:59:38.237Z',
      messageId: '000001378603177f-7a5433e7-8edb-42ae-af10-f0181f34d6ee-000000',
      source: 'john@example.com',
      sourceArn: 'arn:aws:ses:us-east-1:888888888888:identity/example.com',
      sourceIp: '127.0.3.0',
      sendingAccountId: '123456789012',
      callerIdentity: 'IAM_user_or_role_name',
      destination: ['jane@example.com', 'mary@example.com', email],
    },
  };
}

/**
 * Postmark bounce webhook, example JSON.
 * Source: https://postmarkapp.com/developer/webhooks/bounce-webhook (also https://postmarkapp.com/email-webhooks)
 */
export function postmarkBounce(email: string): Record<string, unknown> {
  return {
    RecordType: 'Bounce',
    MessageStream: 'outbound',
    ID: 42,
    Type: 'HardBounce',
    TypeCode: 1,
    Name: 'Hard bounce',
    Tag: 'Test',
    MessageID: '883953f4-6105-42a2-a16a-77a8eac79483',
    Metadata: { a_key: 'a_value', b_key: 'b_value' },
    ServerID: 23,
    Description: 'The server was unable to deliver your message (ex: unknown user, mailbox not found).',
    Details: 'Test bounce details',
    Email: email,
    From: 'sender@example.com',
    BouncedAt: '2019-11-05T16:33:54.9070259Z',
    DumpAvailable: true,
    Inactive: true,
    CanActivate: true,
    Subject: 'Test subject',
    Content: '<Full dump of bounce>',
  };
}

/**
 * Postmark spam complaint webhook, example JSON.
 * Source: https://postmarkapp.com/developer/webhooks/spam-complaint-webhook
 */
export function postmarkComplaint(email: string): Record<string, unknown> {
  return {
    RecordType: 'SpamComplaint',
    MessageStream: 'outbound',
    ID: 42,
    Type: 'SpamComplaint',
    TypeCode: 512,
    Name: 'Spam complaint',
    Tag: 'Test',
    MessageID: '00000000-0000-0000-0000-000000000000',
    Metadata: { a_key: 'a_value', b_key: 'b_value' },
    ServerID: 1234,
    Description: '',
    Details: 'Test spam complaint details',
    Email: email,
    From: 'sender@example.com',
    BouncedAt: '2019-11-05T16:33:54.9070259Z',
    DumpAvailable: true,
    Inactive: true,
    CanActivate: false,
    Subject: 'Test subject',
    Content: '<Abuse report dump>',
  };
}

/**
 * SendGrid Event Webhook, the `bounce` and `spamreport` entries of the documented example batch.
 * The documentation writes the placeholder "sg_event_id" as every event's id; real batches carry a
 * distinct id per event, so each gets one here (an equal id is a redelivery to the driver).
 * Source: https://www.twilio.com/docs/sendgrid/for-developers/tracking-events/event
 */
export function sendgridBounce(email: string, eventId: string): Record<string, unknown> {
  return {
    email,
    timestamp: 1513299569,
    'smtp-id': '<14c5d75ce93.dfd.64b469@ismtpd-555>',
    event: 'bounce',
    category: 'cat facts',
    sg_event_id: eventId,
    sg_message_id: 'sg_message_id',
    reason: '500 unknown recipient',
    status: '5.0.0',
    type: 'bounce',
  };
}

/** SendGrid `spamreport`, same source as sendgridBounce. */
export function sendgridSpamReport(email: string, eventId: string): Record<string, unknown> {
  return {
    email,
    timestamp: 1513299569,
    'smtp-id': '<14c5d75ce93.dfd.64b469@ismtpd-555>',
    event: 'spamreport',
    category: 'cat facts',
    sg_event_id: eventId,
    sg_message_id: 'sg_message_id',
  };
}

/**
 * Mailgun webhook `event-data` of a permanent failure (a hard bounce).
 * Source: https://documentation.mailgun.com/docs/mailgun/user-manual/webhooks/webhook-payloads
 */
export function mailgunPermanentFailure(email: string): Record<string, unknown> {
  return {
    event: 'failed',
    id: 'G9Bn5sl1TC6nu79C8C0bwg',
    timestamp: 1521233195.375624,
    'log-level': 'error',
    severity: 'permanent',
    reason: 'bounce',
    envelope: { sender: 'bob@sample.mailgun.com', transport: 'smtp', targets: email },
    flags: { 'is-routed': false, 'is-authenticated': true, 'is-system-test': false, 'is-test-mode': false },
    'delivery-status': {
      'attempt-no': 1,
      message: '',
      code: 550,
      'enhanced-code': '5.1.1',
      description: 'The email account that you tried to reach does not exist.',
      'session-seconds': 0.1,
    },
    message: {
      headers: { to: `Alice <${email}>`, 'message-id': '20130503182626.18666.16540@sample.mailgun.com', from: 'Bob <bob@sample.mailgun.com>', subject: 'Test permanent_fail webhook' },
      attachments: [],
      size: 111,
    },
    recipient: email,
    'recipient-domain': email.split('@')[1],
    campaigns: [],
    tags: ['my_tag_1', 'my_tag_2'],
    'user-variables': { 'my_var_1': 'Mailgun Variable #1', 'my-var-2': 'awesome' },
  };
}

/** Mailgun webhook `event-data` of a spam complaint; same source as mailgunPermanentFailure. */
export function mailgunComplaint(email: string): Record<string, unknown> {
  return {
    event: 'complained',
    id: '-Agny091SquKnsrW2NEKUA',
    timestamp: 1521233123.501324,
    'log-level': 'warn',
    envelope: { 'sending-ip': '173.193.210.33' },
    flags: { 'is-test-mode': false },
    message: {
      headers: { to: `Alice <${email}>`, 'message-id': '20110215055645.25246.63817@sample.mailgun.com', from: 'Bob <bob@sample.mailgun.com>', subject: 'Test complained webhook' },
      attachments: [],
      size: 111,
    },
    recipient: email,
    campaigns: [],
    tags: ['my_tag_1', 'my_tag_2'],
    'user-variables': { 'my_var_1': 'Mailgun Variable #1', 'my-var-2': 'awesome' },
  };
}
