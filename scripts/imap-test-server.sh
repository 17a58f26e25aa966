#!/usr/bin/env bash
# A throwaway mail system on loopback for the bounce-mailbox tests:
#   - Dovecot IMAP (Debian package dovecot-imapd) serving one passwd-file user whose Maildir lives in a
#     temp folder owned by nobody, plaintext login allowed (loopback only, no TLS);
#   - Postfix (Debian package postfix), if installed, with its own config, queue and log folders, listening
#     on loopback only, delivering bounces+<anything>@bounce.test into that same Maildir and refusing to
#     relay anywhere else, so a message to an unknown local user makes Postfix write a real DSN.
# Nothing of the system's own Dovecot or Postfix configuration is used or changed.
#
#   scripts/imap-test-server.sh start        prints imap://notify:<pass>@127.0.0.1:<port>/INBOX
#   scripts/imap-test-server.sh postfix-url  prints smtp://127.0.0.1:<port> (empty when Postfix is not running)
#   scripts/imap-test-server.sh stop
#
# NOTIFY_TEST_IMAP_DIR chooses the state folder (default /tmp/notify-imap-test).
set -euo pipefail

DIR="${NOTIFY_TEST_IMAP_DIR:-/tmp/notify-imap-test}"
USER_NAME=notify
USER_PASS=notify-test-pass
BOUNCE_DOMAIN=bounce.test
MAIL_UID="$(id -u nobody)"
MAIL_GID="$(id -g nobody)"

free_port() {
  node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

wait_port() {
  for _ in $(seq 1 50); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "nothing answers on 127.0.0.1:$1" >&2
  return 1
}

write_dovecot_conf() {
  local port="$1"
  mkdir -p "$DIR/run" "$DIR/state" "$DIR/mail/$USER_NAME/Maildir"/{cur,new,tmp}
  chown -R "$MAIL_UID:$MAIL_GID" "$DIR/mail"
  echo "$USER_NAME:{PLAIN}$USER_PASS" >"$DIR/passwd"
  cat >"$DIR/dovecot.conf" <<EOF
base_dir = $DIR/run
state_dir = $DIR/state
log_path = $DIR/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
first_valid_uid = 1
last_valid_uid = 0
mail_location = maildir:~/Maildir
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u $DIR/passwd
}
userdb {
  driver = static
  args = uid=$MAIL_UID gid=$MAIL_GID home=$DIR/mail/%u
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = $port
  }
  inet_listener imaps {
    port = 0
  }
}
service stats {
  unix_listener stats-reader {
    mode = 0600
  }
  unix_listener stats-writer {
    mode = 0600
  }
}
EOF
}

start_postfix() {
  local port="$1" conf="$DIR/postfix"
  mkdir -p "$conf" "$DIR/postfix-queue" "$DIR/postfix-data"
  cp /etc/postfix/master.cf "$conf/master.cf"
  # Only our loopback listener; no chroot (the queue folder has no chroot tree).
  sed -i -E "s/^smtp[[:space:]]+inet[[:space:]].*/127.0.0.1:$port inet n - n - - smtpd/" "$conf/master.cf"
  cat >"$conf/main.cf" <<EOF
compatibility_level = 3.6
queue_directory = $DIR/postfix-queue
data_directory = $DIR/postfix-data
maillog_file = $DIR/postfix.log
maillog_file_prefixes = $DIR
mail_owner = postfix
setgid_group = postdrop
myhostname = mta.notify.test
mydomain = notify.test
myorigin = \$myhostname
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
mydestination = \$myhostname, localhost
# accept any local part at SMTP time, so local(8) finds the unknown user and Postfix writes the DSN
local_recipient_maps =
alias_maps =
alias_database =
recipient_delimiter = +
# bounce.test lands in INBOX; e2e-<engine>.bounce.test in folder e2e-<engine>, so the end-to-end
# workers (which poll their folder on their own) never see another test's reports
virtual_mailbox_domains = $BOUNCE_DOMAIN, e2e-sqlite.$BOUNCE_DOMAIN, e2e-postgres.$BOUNCE_DOMAIN
virtual_mailbox_base = $DIR/mail
virtual_mailbox_maps = inline:{ bounces@$BOUNCE_DOMAIN=$USER_NAME/Maildir/, bounces@e2e-sqlite.$BOUNCE_DOMAIN=$USER_NAME/Maildir/.e2e-sqlite/, bounces@e2e-postgres.$BOUNCE_DOMAIN=$USER_NAME/Maildir/.e2e-postgres/ }
virtual_uid_maps = static:$MAIL_UID
virtual_gid_maps = static:$MAIL_GID
virtual_minimum_uid = 1
# nothing ever leaves this machine
relayhost =
default_transport = error:5.7.1 test mail system: no external delivery
smtpd_relay_restrictions = permit_mynetworks, reject_unauth_destination
smtpd_banner = \$myhostname ESMTP
biff = no
EOF
  postconf -c "$conf" -F '*/*/chroot = n' >/dev/null
  postfix -c "$conf" set-permissions >/dev/null 2>&1 || true
  postfix -c "$conf" check || { script -qc "postfix -c $conf check" /dev/null >&2; return 1; }
  postfix -c "$conf" start >/dev/null 2>&1
  wait_port "$port"
  echo "smtp://127.0.0.1:$port" >"$DIR/postfix-url"
}

stop_all() {
  if [ -f "$DIR/postfix/main.cf" ]; then postfix -c "$DIR/postfix" stop >/dev/null 2>&1 || true; fi
  if [ -f "$DIR/run/master.pid" ]; then
    local pid
    pid="$(cat "$DIR/run/master.pid")"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -rf "$DIR"
}

case "${1:-}" in
  start)
    command -v dovecot >/dev/null || { echo "dovecot is not installed (apt-get install -y dovecot-imapd)" >&2; exit 1; }
    stop_all
    mkdir -p "$DIR"
    imap_port="$(free_port)"
    write_dovecot_conf "$imap_port"
    dovecot -c "$DIR/dovecot.conf"
    wait_port "$imap_port"
    if command -v postfix >/dev/null && [ -f /etc/postfix/master.cf ]; then start_postfix "$(free_port)"; fi
    echo "imap://$USER_NAME:$USER_PASS@127.0.0.1:$imap_port/INBOX" | tee "$DIR/imap-url"
    ;;
  postfix-url)
    cat "$DIR/postfix-url" 2>/dev/null || true
    ;;
  stop)
    stop_all
    ;;
  *)
    echo "usage: $0 start|postfix-url|stop" >&2
    exit 2
    ;;
esac
