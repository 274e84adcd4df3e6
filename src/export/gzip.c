// SPDX-License-Identifier: MIT
/*
 * zlib behind protobuf-c's output buffer: a message is compressed as it is
 * encoded, so that its encoding is never whole in memory.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

#include "gzip.h"

struct gz_buffer {
	ProtobufCBuffer base;
	z_stream z;
	FILE *out;
	int err; /* errno of the first failure */
	unsigned char chunk[65536];
};

static void gz_run(struct gz_buffer *g, int flush)
{
	int zret;

	do {
		g->z.next_out = g->chunk;
		g->z.avail_out = sizeof(g->chunk);
		zret = deflate(&g->z, flush);
		if (zret == Z_STREAM_ERROR) {
			g->err = EIO;
			return;
		}
		size_t have = sizeof(g->chunk) - g->z.avail_out;
		if (have && fwrite(g->chunk, 1, have, g->out) != have) {
			g->err = errno ? errno : EIO;
			return;
		}
	} while (g->z.avail_out == 0 ||
		 (flush == Z_FINISH && zret != Z_STREAM_END));
}

static void gz_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	struct gz_buffer *g = (struct gz_buffer *)b;

	while (len && !g->err) {
		/* avail_in is 32 bits wide */
		uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;

		g->z.next_in = (Bytef *)(uintptr_t)data;
		g->z.avail_in = n;
		gz_run(g, Z_NO_FLUSH);
		data += n;
		len -= n;
	}
}

int gzip_pack(const ProtobufCMessage *m, FILE *out)
{
	struct gz_buffer *g = calloc(1, sizeof(*g));
	int err;

	if (!g)
		return -ENOMEM;
	g->base.append = gz_append;
	g->out = out;
	/* 15 + 16: a gzip header and trailer, which pprof expects */
	if (deflateInit2(&g->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		return -ENOMEM;
	}
	protobuf_c_message_pack_to_buffer(m, &g->base);
	if (!g->err)
		gz_run(g, Z_FINISH);
	deflateEnd(&g->z);
	err = g->err;
	free(g);
	return -err;
}

int gzip_pack_mem(const ProtobufCMessage *m, char **out, size_t *len)
{
	FILE *mem;
	int ret;

	*out = NULL;
	*len = 0;
	mem = open_memstream(out, len);
	if (!mem)
		return -ENOMEM;
	ret = gzip_pack(m, mem);
	if (fclose(mem) && !ret)
		ret = -ENOMEM;
	if (ret) {
		free(*out);
		*out = NULL;
	}
	return ret;
}
