// bench/peer_codecs.cpp: see peer_codecs.hpp. In-memory streams for
// OpenJPEG and libpng, so that a timing holds the codec and not the disk.
#include "peer_codecs.hpp"

#include <openjpeg.h>
#include <png.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

namespace vlec::bench {

namespace {

// A growable byte buffer with a cursor: OpenJPEG's writer seeks back to
// patch markers, and its reader skips and seeks.
struct MemoryStream {
  std::vector<uint8_t> bytes;
  std::size_t at = 0;
};

OPJ_SIZE_T mem_write(void* data, OPJ_SIZE_T n, void* user) {
  auto* m = static_cast<MemoryStream*>(user);
  if (m->at + n > m->bytes.size()) m->bytes.resize(m->at + n);
  std::memcpy(m->bytes.data() + m->at, data, n);
  m->at += n;
  return n;
}

OPJ_SIZE_T mem_read(void* data, OPJ_SIZE_T n, void* user) {
  auto* m = static_cast<MemoryStream*>(user);
  if (m->at >= m->bytes.size()) return static_cast<OPJ_SIZE_T>(-1);
  const std::size_t take = std::min<std::size_t>(n, m->bytes.size() - m->at);
  std::memcpy(data, m->bytes.data() + m->at, take);
  m->at += take;
  return take;
}

OPJ_OFF_T mem_skip(OPJ_OFF_T n, void* user) {
  auto* m = static_cast<MemoryStream*>(user);
  if (n < 0 && static_cast<std::size_t>(-n) > m->at) return -1;
  m->at = static_cast<std::size_t>(static_cast<OPJ_OFF_T>(m->at) + n);
  return n;
}

OPJ_BOOL mem_seek(OPJ_OFF_T to, void* user) {
  auto* m = static_cast<MemoryStream*>(user);
  if (to < 0) return OPJ_FALSE;
  m->at = static_cast<std::size_t>(to);
  return OPJ_TRUE;
}

opj_stream_t* make_stream(MemoryStream& m, bool input) {
  opj_stream_t* s = opj_stream_create(1 << 20, input ? OPJ_TRUE : OPJ_FALSE);
  if (!s) throw std::runtime_error("OpenJPEG: cannot create a stream");
  opj_stream_set_user_data(s, &m, nullptr);
  if (input) {
    opj_stream_set_user_data_length(s, m.bytes.size());
    opj_stream_set_read_function(s, mem_read);
  } else {
    opj_stream_set_write_function(s, mem_write);
  }
  opj_stream_set_skip_function(s, mem_skip);
  opj_stream_set_seek_function(s, mem_seek);
  return s;
}

struct CodecDeleter {
  void operator()(opj_codec_t* c) const { opj_destroy_codec(c); }
};
struct ImageDeleter {
  void operator()(opj_image_t* i) const { opj_image_destroy(i); }
};
struct StreamDeleter {
  void operator()(opj_stream_t* s) const { opj_stream_destroy(s); }
};

unsigned sample_at(const PeerImage& im, std::size_t i) {
  if (!im.wide) return im.samples[i];
  uint16_t v;
  std::memcpy(&v, im.samples.data() + 2 * i, 2);
  return v;
}

}  // namespace

std::vector<uint8_t> openjpeg_encode(const PeerImage& im, unsigned threads) {
  opj_cparameters_t p;
  opj_set_default_encoder_parameters(&p);
  // What opj_compress does with no options: one lossless layer, the
  // reversible 5/3 wavelet (irreversible = 0 by default), MCT on RGB.
  p.tcp_numlayers = 1;
  p.tcp_rates[0] = 0;
  p.cp_disto_alloc = 1;
  p.tcp_mct = im.planes == 3 ? 1 : 0;

  opj_image_cmptparm_t cmpt[3];
  std::memset(cmpt, 0, sizeof cmpt);
  for (unsigned c = 0; c < im.planes; ++c) {
    cmpt[c].dx = cmpt[c].dy = 1;
    cmpt[c].w = static_cast<OPJ_UINT32>(im.width);
    cmpt[c].h = static_cast<OPJ_UINT32>(im.height);
    cmpt[c].prec = im.bits;
    cmpt[c].sgnd = 0;
  }
  std::unique_ptr<opj_image_t, ImageDeleter> image(
      opj_image_create(im.planes, cmpt, im.planes == 3 ? OPJ_CLRSPC_SRGB : OPJ_CLRSPC_GRAY));
  if (!image) throw std::runtime_error("OpenJPEG: cannot create the image");
  image->x0 = image->y0 = 0;
  image->x1 = static_cast<OPJ_UINT32>(im.width);
  image->y1 = static_cast<OPJ_UINT32>(im.height);
  const std::size_t pixels = im.width * im.height;
  for (unsigned c = 0; c < im.planes; ++c) {
    OPJ_INT32* d = image->comps[c].data;
    for (std::size_t i = 0; i < pixels; ++i) d[i] = static_cast<OPJ_INT32>(sample_at(im, i * im.planes + c));
  }

  std::unique_ptr<opj_codec_t, CodecDeleter> codec(opj_create_compress(OPJ_CODEC_J2K));
  if (!codec || !opj_setup_encoder(codec.get(), &p, image.get()))
    throw std::runtime_error("OpenJPEG: encoder setup failed");
  if (threads > 1) opj_codec_set_threads(codec.get(), static_cast<int>(threads));
  MemoryStream out;
  std::unique_ptr<opj_stream_t, StreamDeleter> stream(make_stream(out, false));
  if (!opj_start_compress(codec.get(), image.get(), stream.get()) || !opj_encode(codec.get(), stream.get()) ||
      !opj_end_compress(codec.get(), stream.get()))
    throw std::runtime_error("OpenJPEG: encoding failed");
  stream.reset();
  return std::move(out.bytes);
}

PeerImage openjpeg_decode(const std::vector<uint8_t>& codestream, unsigned threads) {
  MemoryStream in{codestream, 0};
  std::unique_ptr<opj_stream_t, StreamDeleter> stream(make_stream(in, true));
  std::unique_ptr<opj_codec_t, CodecDeleter> codec(opj_create_decompress(OPJ_CODEC_J2K));
  opj_dparameters_t p;
  opj_set_default_decoder_parameters(&p);
  if (!codec || !opj_setup_decoder(codec.get(), &p)) throw std::runtime_error("OpenJPEG: decoder setup failed");
  if (threads > 1) opj_codec_set_threads(codec.get(), static_cast<int>(threads));
  opj_image_t* raw = nullptr;
  if (!opj_read_header(stream.get(), codec.get(), &raw)) throw std::runtime_error("OpenJPEG: bad header");
  std::unique_ptr<opj_image_t, ImageDeleter> image(raw);
  if (!opj_decode(codec.get(), stream.get(), image.get()) || !opj_end_decompress(codec.get(), stream.get()))
    throw std::runtime_error("OpenJPEG: decoding failed");
  PeerImage im;
  im.planes = image->numcomps;
  im.width = image->comps[0].w;
  im.height = image->comps[0].h;
  im.bits = image->comps[0].prec;
  im.wide = im.bits > 8;
  const std::size_t pixels = im.width * im.height;
  im.samples.resize(pixels * im.planes * (im.wide ? 2 : 1));
  for (unsigned c = 0; c < im.planes; ++c) {
    const OPJ_INT32* d = image->comps[c].data;
    for (std::size_t i = 0; i < pixels; ++i) {
      const std::size_t at = i * im.planes + c;
      if (im.wide) {
        const uint16_t v = static_cast<uint16_t>(d[i]);
        std::memcpy(im.samples.data() + 2 * at, &v, 2);
      } else {
        im.samples[at] = static_cast<uint8_t>(d[i]);
      }
    }
  }
  return im;
}

namespace {

void png_append(png_structp png, png_bytep data, png_size_t n) {
  auto* out = static_cast<std::vector<uint8_t>*>(png_get_io_ptr(png));
  out->insert(out->end(), data, data + n);
}

void png_fail(png_structp, png_const_charp message) { throw std::runtime_error(std::string("libpng: ") + message); }

}  // namespace

std::vector<uint8_t> png_encode(const PeerImage& im) {
  std::vector<uint8_t> out;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, png_fail, nullptr);
  if (!png) throw std::runtime_error("libpng: cannot create a writer");
  png_infop info = png_create_info_struct(png);
  try {
    png_set_write_fn(png, &out, png_append, nullptr);
    png_set_IHDR(png, info, static_cast<png_uint_32>(im.width), static_cast<png_uint_32>(im.height),
                 im.wide ? 16 : 8, im.planes == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    if (im.wide) png_set_swap(png);  // PNG is big-endian; the samples are in host (little-endian) order
    const std::size_t row = im.width * im.planes * (im.wide ? 2 : 1);
    for (std::size_t y = 0; y < im.height; ++y)
      png_write_row(png, const_cast<png_bytep>(im.samples.data() + y * row));
    png_write_end(png, nullptr);
  } catch (...) {
    png_destroy_write_struct(&png, &info);
    throw;
  }
  png_destroy_write_struct(&png, &info);
  return out;
}

}  // namespace vlec::bench
