/* fuzz-rendezvous.c: the rendezvous store's protocol
 * (core/accel-rendezvous-wire.c and the store of
 * core/accel-rendezvous-store.c), fed by a hostile peer.
 *
 * The input is a byte stream. First the client's reader takes it as what
 * a store sent (through a socket pair, message after message until it
 * refuses one or the bytes end); then a fresh store on 127.0.0.1 (a job of
 * one or two processes, with the token "fuzz-token" or none, as the last
 * byte says)
 * takes it as what a process sent on a connection, and everything the
 * store answers is read back with the client's reader until the store
 * closes the connection. Every answer must be a message the reader
 * accepts; the store must answer within the deadline and stop cleanly.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <sys/socket.h>
#include <gio/gio.h>

#include "fuzz-env.h"
#include "accel-rendezvous-private.h"

#define MAX_MESSAGE (64 * 1024)
#define ANSWER_DEADLINE_US (5 * G_USEC_PER_SEC)

/* The client's side: messages read off a socket until one is refused. */
static void
read_as_client (const guint8 *data, gsize size)
{
  int sv[2];
  g_assert (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
  g_autoptr(GSocket) ours = g_socket_new_from_fd (sv[0], NULL);
  g_autoptr(GSocket) theirs = g_socket_new_from_fd (sv[1], NULL);
  g_assert (ours && theirs);
  /* A socket pair's buffer takes a fuzzer's input whole. */
  gssize sent = size ? g_socket_send (theirs, (const char *) data, size, NULL, NULL) : 0;
  g_assert (sent == (gssize) size);
  g_socket_shutdown (theirs, FALSE, TRUE, NULL);
  for (;;)
    {
      AccelWireKind kind;
      guint64 request;
      g_autoptr(GVariant) payload = NULL;
      g_autoptr(GError) error = NULL;
      if (!_accel_wire_read (ours, MAX_MESSAGE, g_get_monotonic_time () + ANSWER_DEADLINE_US, NULL, &kind,
                             &request, &payload, &error))
        {
          g_assert (error != NULL);
          break;
        }
      g_assert (payload != NULL && g_variant_is_of_type (payload, G_VARIANT_TYPE (_accel_wire_payload_type (kind))));
    }
}

static void
serve (const guint8 *data, gsize size)
{
  g_autoptr(GError) error = NULL;
  guint8 flags = size ? data[size - 1] : 0;
  g_autoptr(AccelRendezvousStore) store = accel_rendezvous_store_new ("127.0.0.1", 0, 1 + (flags & 1),
                                                                      flags & 2 ? "fuzz-token" : NULL, 2000,
                                                                      &error);
  g_assert_no_error (error);
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  g_autoptr(GSocketConnection) conn =
    g_socket_client_connect_to_host (client, "127.0.0.1", accel_rendezvous_store_get_port (store), NULL, &error);
  g_assert_no_error (error);
  GSocket *socket = g_socket_connection_get_socket (conn);

  /* All of it (the store reads as it comes), then the end. */
  for (gsize done = 0; done < size;)
    {
      gssize n = g_socket_send (socket, (const char *) data + done, size - done, NULL, &error);
      if (n <= 0)
        break;   /* the store closed the connection: it refused something */
      done += n;
    }
  g_clear_error (&error);
  g_socket_shutdown (socket, FALSE, TRUE, NULL);

  gint64 deadline = g_get_monotonic_time () + ANSWER_DEADLINE_US;
  for (;;)
    {
      AccelWireKind kind;
      guint64 request;
      g_autoptr(GVariant) payload = NULL;
      g_autoptr(GError) read_error = NULL;
      if (!_accel_wire_read (socket, ACCEL_WIRE_DEFAULT_MAX_MESSAGE, deadline, NULL, &kind, &request,
                             &payload, &read_error))
        {
          if (g_error_matches (read_error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT))
            g_error ("The store did not close the connection within %d s", ANSWER_DEADLINE_US / G_USEC_PER_SEC);
          /* Anything else the store sent must have been well formed. */
          g_assert (g_error_matches (read_error, G_IO_ERROR, G_IO_ERROR_CONNECTION_CLOSED)
                    || g_error_matches (read_error, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE)
                    || g_error_matches (read_error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED)
                    || read_error->domain == G_IO_ERROR);
          break;
        }
      g_assert (kind == ACCEL_WIRE_WELCOME || kind == ACCEL_WIRE_PONG || kind == ACCEL_WIRE_RESULT
                || kind == ACCEL_WIRE_NOTICE || kind == ACCEL_WIRE_ERROR);
    }
  g_io_stream_close (G_IO_STREAM (conn), NULL, NULL);
  accel_rendezvous_store_stop (store);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  if (size > MAX_MESSAGE)
    return 0;
  read_as_client (data, size);
  serve (data, size);
  return 0;
}
